// Package ws serves openheim's WebSockets: /ws, the multiplexed envelope
// of seed 000 (agent, fs and system channels), and /acp, bare ACP with one
// JSON-RPC message per text frame. Every connection runs its own ACP peer
// over the one shared Hub, so connections see each other's turns.
package ws

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/openheim/openheim/protocol/acp/agent"
	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/history"
	"github.com/openheim/openheim/runtime/live"
)

// Defaults for Server's limits.
const (
	DefaultSendQueue = 1024    // frames waiting for one client
	DefaultMaxFrame  = 8 << 20 // bytes in one frame from a client
	DefaultMaxConns  = 4096
)

// Subprotocol is the WebSocket subprotocol the server selects when a client
// offers it (the web client does, beside the one carrying its token).
const Subprotocol = "openheim"

// Server holds the WebSocket endpoints' shared state.
type Server struct {
	Engine  *engine.Engine
	Catalog *history.Catalog
	Hub     *live.Hub
	Version string
	// Policy bounds the sessions clients open (cwd, their own MCP
	// servers); nil allows what the client asks.
	Policy *agent.SessionPolicy
	// Runner runs the turns (nil: Engine); External serves the sessions
	// bound to an external ACP agent (nil: none).
	Runner   engine.Runner
	External agent.ExternalAgents

	SendQueue int   // frames queued per client before it is closed as too slow
	MaxFrame  int64 // largest frame a client may send
	MaxConns  int   // connections at once; more are refused with 503
	// CheckOrigin accepts a browser's Origin; nil accepts every origin.
	CheckOrigin func(r *http.Request) bool
	Log         *slog.Logger

	once     sync.Once
	upgrader websocket.Upgrader

	mu      sync.Mutex
	conns   map[*Conn]struct{}
	closing bool
	wg      sync.WaitGroup
}

func (s *Server) init() {
	s.once.Do(func() {
		if s.SendQueue <= 0 {
			s.SendQueue = DefaultSendQueue
		}
		if s.MaxFrame <= 0 {
			s.MaxFrame = DefaultMaxFrame
		}
		if s.MaxConns <= 0 {
			s.MaxConns = DefaultMaxConns
		}
		if s.Log == nil {
			s.Log = slog.Default()
		}
		check := s.CheckOrigin
		if check == nil {
			check = func(*http.Request) bool { return true }
		}
		s.upgrader = websocket.Upgrader{
			HandshakeTimeout: 10 * time.Second,
			// Selected when offered: a browser that carries its token in a
			// second subprotocol needs one chosen, or it drops the socket.
			Subprotocols:    []string{Subprotocol},
			WriteBufferPool: &sync.Pool{}, // idle connections hold no write buffer
			// A read buffer of its own, 1 KiB, rather than net/http's 4 KiB
			// one: clients send little (prompts, answers), and a larger
			// frame is read through it all the same.
			ReadBufferSize: 1 << 10,
			CheckOrigin:    check,
			Error: func(w http.ResponseWriter, _ *http.Request, status int, reason error) {
				writeError(w, status, reason.Error())
			},
		}
		s.conns = map[*Conn]struct{}{}
	})
}

// accept upgrades r and registers the connection (envelope: it speaks
// seed 000's envelope); nil when refused (the response has been written).
// The caller serves it on a goroutine of its own and returns: net/http
// lets go of the request's buffers (6 KiB) once the handler has returned,
// and a server holds many idle connections.
func (s *Server) accept(w http.ResponseWriter, r *http.Request, envelope bool) *Conn {
	s.init()
	s.mu.Lock()
	full, closing := len(s.conns) >= s.MaxConns, s.closing
	s.mu.Unlock()
	if closing {
		writeError(w, http.StatusServiceUnavailable, "the server is shutting down")
		return nil
	}
	if full {
		writeError(w, http.StatusServiceUnavailable, "too many connections")
		return nil
	}
	hj := &hijacker{ResponseWriter: w}
	c, err := s.upgrader.Upgrade(hj, r, nil)
	if err != nil {
		s.Log.Debug("ws: upgrade refused", "err", err, "remote", r.RemoteAddr)
		return nil
	}
	conn := newConn(c, hj.conn, s.SendQueue, s.MaxFrame)
	conn.envelope = envelope
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		conn.Close(websocket.CloseGoingAway, reasonShutdown)
		return nil
	}
	s.conns[conn] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	return conn
}

func (s *Server) release(conn *Conn) {
	<-conn.Done()
	s.mu.Lock()
	delete(s.conns, conn)
	s.mu.Unlock()
	s.wg.Done()
}

func (s *Server) agent() *agent.Agent {
	return &agent.Agent{Engine: s.Engine, Catalog: s.Catalog, Version: s.Version, Hub: s.Hub, Policy: s.Policy,
		Runner: s.Runner, External: s.External}
}

// Conns reports how many connections are open.
func (s *Server) Conns() int {
	s.init()
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// Notify sends a system notice to every /ws connection (shutting_down).
func (s *Server) Notify(kind, message string) {
	s.init()
	frame := envelope("system", mustJSON(systemEvent{Type: kind, Message: message}))
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		if c.envelope {
			c.Send(frame)
		}
	}
}

// Shutdown refuses new connections, closes every open one with "going
// away" (after what is queued for it), and waits until their handlers have
// returned or ctx ends. Stop the Hub first so clients get their turns'
// cancelled answers before the close.
func (s *Server) Shutdown(ctx context.Context) error {
	s.init()
	s.mu.Lock()
	s.closing = true
	conns := make([]*Conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	// Each peer answers what it was handling (a cancelled turn's prompt)
	// and stops; then its connection closes after what is queued.
	for _, c := range conns {
		c.stop()
	}
	for _, c := range conns {
		select {
		case <-c.served:
		case <-ctx.Done():
		}
		c.Close(websocket.CloseGoingAway, reasonShutdown)
	}
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
