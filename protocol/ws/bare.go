package ws

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
)

// Bare serves WS /acp: ACP with one JSON-RPC message per text frame.
func (s *Server) Bare(w http.ResponseWriter, r *http.Request) {
	if conn := s.accept(w, r, false); conn != nil {
		go s.serveBare(conn)
	}
}

func (s *Server) serveBare(conn *Conn) {
	defer s.release(conn)
	defer conn.stop()
	err := s.agent().Serve(conn.ctx, bareStream{conn})
	close(conn.served)
	if err != nil && !errors.Is(err, context.Canceled) {
		s.Log.Debug("ws: /acp connection ended", "err", err)
	}
	conn.closeUnlessShutdown()
}

type bareStream struct{ conn *Conn }

func (b bareStream) Read() (json.RawMessage, error) {
	m, err := b.conn.Read()
	return m, err
}

func (b bareStream) Write(m json.RawMessage) error { return b.conn.Send(m) }

// Close does nothing: serveBare closes the connection once the peer has
// stopped, after what it still sends, and Shutdown with its own reason.
func (b bareStream) Close() error { return nil }

// InterruptRead implements jsonrpc.ReadInterrupter.
func (b bareStream) InterruptRead() { b.conn.interruptRead() }
