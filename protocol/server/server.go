// Package server assembles openheim's HTTP server: the REST API, the /ws
// and /acp WebSockets and /healthz behind one access guard, with limits,
// timeouts and a graceful shutdown.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/protocol/rest"
	"github.com/openheim/openheim/protocol/server/web"
	"github.com/openheim/openheim/protocol/sessionsapi"
	"github.com/openheim/openheim/protocol/ws"
	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/history"
	"github.com/openheim/openheim/runtime/mcp"
)

// Limits of every request.
const (
	maxBodyBytes   = 1 << 20 // REST request bodies
	restTimeout    = 30 * time.Second
	uploadTimeout  = 5 * time.Minute // a file or agent bundle on a slow link
	headerTimeout  = 10 * time.Second
	readTimeout    = 30 * time.Second // a whole request (WebSockets reset it)
	writeTimeout   = time.Minute      // a whole response (WebSockets reset it)
	idleTimeout    = 2 * time.Minute
	maxHeaderBytes = 64 << 10
)

// Options configure a Server.
type Options struct {
	Engine  *engine.Engine
	Catalog *history.Catalog
	Version string
	// Token, when set, is required of every request. Loopback is set when
	// the listener is loopback-only; without a token the server then also
	// refuses Host names that are not loopback (DNS rebinding).
	Token    string
	Loopback bool
	Log      *slog.Logger
	// WS limits; zero means the ws package's defaults.
	SendQueue int
	MaxFrame  int64
	MaxConns  int
	// DataDir holds what the sessions API keeps (uploaded agents, session
	// files and settings): the data directory.
	DataDir string
}

// Server is a running openheim HTTP server.
type Server struct {
	hub      *acp.Hub
	ws       *ws.Server
	sessions *sessionsapi.API
	http     *http.Server
	log      *slog.Logger
}

// New builds the server; it serves once Serve is called.
func New(opts Options) (*Server, error) {
	log := opts.Log
	if log == nil {
		log = slog.Default()
	}
	cfg := opts.Engine.Config
	hub := acp.NewHub(context.Background(), opts.Engine)
	wss := &ws.Server{Engine: opts.Engine, Catalog: opts.Catalog, Hub: hub, Version: opts.Version,
		SendQueue: opts.SendQueue, MaxFrame: opts.MaxFrame, MaxConns: opts.MaxConns, Log: log,
		// The guard has checked the Origin already.
		CheckOrigin: func(*http.Request) bool { return true }}
	api := &rest.Server{Engine: opts.Engine, Catalog: opts.Catalog, Skills: func() []string {
		names, err := opts.Engine.Skills()
		if err != nil {
			log.Warn("serve: listing skills", "err", err)
		}
		return names
	}}
	api.Cancel = hub.Cancel
	if m, ok := opts.Engine.MCP.(interface{ Status() []mcp.Status }); ok {
		api.MCP = m.Status
	}

	sessions, err := sessionsapi.New(sessionsapi.Options{Engine: opts.Engine, Hub: hub, Store: opts.Engine.Store,
		Catalog: opts.Catalog, DataDir: opts.DataDir, Log: log})
	if err != nil {
		return nil, fmt.Errorf("sessions API: %w", err)
	}

	mux := http.NewServeMux()
	mux.Handle("/api/", limited(api.Handler()))
	sessions.Register(mux, limitedTo)
	mux.Handle("GET /healthz", limited(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"status":"ok"}` + "\n"))
	})))
	mux.HandleFunc("GET /ws", wss.Envelope)
	mux.HandleFunc("GET /acp", wss.Bare)
	// The built-in web client; anything else unknown is a JSON 404.
	mux.Handle("/", limited(web.Handler()))

	return &Server{hub: hub, ws: wss, sessions: sessions, log: log, http: &http.Server{
		Handler: guard{token: opts.Token, loopbackOnly: opts.Loopback && opts.Token == "",
			allowedOrigins: cfg.Serve.AllowedOrigins, public: web.IsAsset}.wrap(mux),
		ReadHeaderTimeout: headerTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}}, nil
}

// limited bounds a plain HTTP handler's body and time (WebSockets are
// bounded per frame and by pings instead, SSE streams by their writes).
func limited(h http.Handler) http.Handler { return limitedTo(h, maxBodyBytes) }

// limitedTo is limited with a body limit of its own (uploads).
func limitedTo(h http.Handler, maxBody int64) http.Handler {
	timeout := restTimeout
	if maxBody > maxBodyBytes {
		timeout = uploadTimeout
	}
	inner := http.TimeoutHandler(h, timeout, `{"error":"request timed out"}`)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if timeout > restTimeout {
			// The server's read timeout is sized for small bodies.
			http.NewResponseController(w).SetReadDeadline(time.Now().Add(timeout))
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		inner.ServeHTTP(w, r)
	})
}

// Serve serves on l until ctx ends, then shuts down gracefully: no new
// connections, WebSocket clients told on the system channel, running turns
// cancelled and their sessions saved, then every connection closed. grace
// bounds the whole shutdown.
func (s *Server) Serve(ctx context.Context, l net.Listener, grace time.Duration) error {
	errc := make(chan error, 1)
	go func() { errc <- s.http.Serve(l) }()
	select {
	case err := <-errc:
		s.sessions.Close()
		s.hub.Stop()
		return err
	case <-ctx.Done():
	}
	return s.Shutdown(grace)
}

// Shutdown stops the server as Serve does when its context ends.
func (s *Server) Shutdown(grace time.Duration) error {
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	s.ws.Notify("shutting_down", "openheim is shutting down; running turns are being cancelled")
	s.sessions.Close()            // SSE streams end with [DONE]; Shutdown would wait for them
	herr := s.http.Shutdown(sctx) // stops accepting, waits for REST requests
	s.hub.Stop()                  // cancels turns; their answers go out before the close
	werr := s.ws.Shutdown(sctx)
	if errors.Is(herr, http.ErrServerClosed) {
		herr = nil
	}
	return errors.Join(herr, werr)
}

// Hub is the server's shared ACP hub (tests watch its turns).
func (s *Server) Hub() *acp.Hub { return s.hub }

// Conns reports how many WebSocket connections are open.
func (s *Server) Conns() int { return s.ws.Conns() }
