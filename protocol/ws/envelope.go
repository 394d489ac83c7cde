package ws

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/openheim/openheim/protocol/fschannel"
)

// Channel names of the /ws envelope.
const (
	ChannelAgent  = "agent"
	ChannelFS     = "fs"
	ChannelSystem = "system"
)

// greeting is seed 000's first message on every /ws connection.
var greeting = envelope(ChannelFS, []byte(`{"type":"connected","message":"Connected to Openheim"}`))

type systemEvent struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// fsBacklog bounds the fs requests read ahead of the one being handled.
const fsBacklog = 64

// Envelope serves WS /ws.
func (s *Server) Envelope(w http.ResponseWriter, r *http.Request) {
	if conn := s.accept(w, r, true); conn != nil {
		go s.serveEnvelope(conn)
	}
}

// serveEnvelope runs the connection's agent channel, whose JSON-RPC peer
// reads the connection itself (envelopeStream): with the writer, two
// goroutines per idle connection.
func (s *Server) serveEnvelope(conn *Conn) {
	defer s.release(conn)
	conn.Send(greeting)
	defer conn.stop()
	fs := &fsLane{s: s, conn: conn}
	st := &envelopeStream{conn: conn, fs: fs}
	if err := s.agent().Serve(conn.ctx, st); err != nil && !errors.Is(err, context.Canceled) {
		s.Log.Debug("ws: agent channel ended", "err", err)
	}
	// The fs requests read so far are answered (cut short) before the
	// connection is said served: Shutdown closes it then.
	fs.close()
	conn.closeUnlessShutdown()
	conn.stop()
	fs.wait()
	close(conn.served)
}

// fsLane runs a connection's fs requests in order on a goroutine the first
// one starts: most connections never use the fs channel, and a thousand
// of them each holding an idle goroutine, a queue and a directory handle
// for it was memory for nothing.
type fsLane struct {
	s    *Server
	conn *Conn
	in   chan json.RawMessage
	done chan struct{}
}

func (l *fsLane) handle(raw json.RawMessage) {
	if l.in == nil {
		l.in = make(chan json.RawMessage, fsBacklog)
		l.done = make(chan struct{})
		go func() {
			defer close(l.done)
			l.s.serveFS(l.conn.ctx, l.conn, l.in)
		}()
	}
	l.in <- raw
}

// close ends the lane's input; wait waits for what was read to be handled.
func (l *fsLane) close() {
	if l.in != nil {
		close(l.in)
	}
}

func (l *fsLane) wait() {
	if l.done != nil {
		<-l.done
	}
}

// envelopeStream is the agent channel's JSON-RPC stream: Read routes each
// frame to its channel and returns the agent channel's next message.
type envelopeStream struct {
	conn *Conn
	fs   *fsLane
}

// Read returns io.EOF once the client has gone (or the read was
// interrupted: the peer is stopping).
func (e *envelopeStream) Read() (json.RawMessage, error) {
	conn := e.conn
	for {
		b, err := conn.Read()
		if err != nil {
			return nil, io.EOF
		}
		var env struct {
			Channel *string         `json:"channel"`
			Data    json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(b, &env); err != nil {
			conn.Send(systemError("Invalid payload: " + describe(err)))
			continue
		}
		switch {
		case env.Channel == nil:
			conn.Send(systemError("Invalid payload: missing field `channel`"))
		case len(env.Data) == 0 || string(env.Data) == "null":
			conn.Send(envelope(safeChannel(*env.Channel), mustJSON(systemEvent{Type: "error", Message: "Invalid payload: missing field `data`"})))
		case *env.Channel == ChannelAgent:
			return env.Data, nil
		case *env.Channel == ChannelFS:
			e.fs.handle(env.Data)
		default:
			conn.Send(systemError(fmt.Sprintf("Invalid payload: unknown channel `%s`, expected `agent` or `fs`", *env.Channel)))
		}
	}
}

func (e *envelopeStream) Write(m json.RawMessage) error {
	return e.conn.Send(envelope(ChannelAgent, m))
}

// Close does nothing: the handler closes the connection once the peer
// has stopped, after what the peer still sends.
func (e *envelopeStream) Close() error { return nil }

// InterruptRead implements jsonrpc.ReadInterrupter.
func (e *envelopeStream) InterruptRead() { e.conn.interruptRead() }

// serveFS handles the connection's fs requests one at a time, in order.
func (s *Server) serveFS(ctx context.Context, conn *Conn, in <-chan json.RawMessage) {
	send := func(msg any) {
		b, err := json.Marshal(msg)
		if err == nil {
			conn.Send(envelope(ChannelFS, b))
		}
	}
	ch, err := fschannel.New(s.Engine.Config.WorkDir, send)
	if err != nil {
		s.Log.Warn("ws: the fs channel is unavailable", "err", err)
	} else {
		defer ch.Close()
	}
	for raw := range in {
		if ch == nil {
			send(systemEvent{Type: "error", Message: "Tool execution error: " + err.Error()})
			continue
		}
		ch.Handle(ctx, raw)
	}
}

// envelope frames data (JSON) as {"channel":...,"data":...}.
func envelope(channel string, data []byte) []byte {
	b := make([]byte, 0, len(data)+len(channel)+24)
	b = append(b, `{"channel":"`...)
	b = append(b, channel...)
	b = append(b, `","data":`...)
	b = append(b, data...)
	return append(b, '}')
}

func systemError(msg string) []byte {
	return envelope(ChannelSystem, mustJSON(systemEvent{Type: "error", Message: msg}))
}

// safeChannel echoes a known channel name, else "system".
func safeChannel(c string) string {
	if c == ChannelAgent || c == ChannelFS {
		return c
	}
	return ChannelSystem
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// describe words a JSON decoding error for a person.
func describe(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("not JSON: %s (byte %d)", syn.Error(), syn.Offset)
	case errors.As(err, &typ) && typ.Field != "":
		return fmt.Sprintf("invalid type: field `%s` is a %s, expected a %s", typ.Field, typ.Value, typ.Type)
	case errors.As(err, &typ):
		return fmt.Sprintf("invalid type: %s, expected an object {channel, data}", typ.Value)
	}
	return err.Error()
}
