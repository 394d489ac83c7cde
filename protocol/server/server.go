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

	"github.com/openheim/openheim/protocol/acp/agent"
	"github.com/openheim/openheim/protocol/acp/host"
	"github.com/openheim/openheim/protocol/rest"
	"github.com/openheim/openheim/protocol/server/web"
	"github.com/openheim/openheim/protocol/sessionsapi"
	"github.com/openheim/openheim/protocol/ws"
	"github.com/openheim/openheim/runtime/backend"
	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/history"
	"github.com/openheim/openheim/runtime/live"
	"github.com/openheim/openheim/runtime/mcp"
)

// Limits of every request.
const (
	maxBodyBytes         = 1 << 20 // any body but a multipart upload's
	DefaultReadTimeout   = 30 * time.Second
	DefaultUploadTimeout = 5 * time.Minute // a file or agent bundle on a slow link
	headerTimeout        = 10 * time.Second
	writeTimeout         = time.Minute // a whole response (WebSockets reset it)
	idleTimeout          = 2 * time.Minute
	maxHeaderBytes       = 64 << 10
)

// timedOut is the body of a 503 for a handler past its time.
const timedOut = `{"error":"request timed out"}`

// timedOut003 is that body in the sessions API's shape.
const timedOut003 = `{"error":{"code":"request_timeout","message":"request timed out"}}`

// Options configure a Server.
type Options struct {
	Engine  *engine.Engine
	Catalog *history.Catalog
	Version string
	// Token is required of every request but those for the web client's
	// own files. New refuses an empty one unless InsecureNoAuth is set,
	// which serves everyone on a loopback listener (Loopback set) and is
	// refused on any other.
	Token          string
	InsecureNoAuth bool
	Loopback       bool
	Log            *slog.Logger
	// ReadTimeout bounds reading a whole request and its handler's run;
	// UploadTimeout the same for a multipart upload. Zero means the
	// defaults (tests shorten them).
	ReadTimeout, UploadTimeout time.Duration
	// WS limits; zero means the ws package's defaults.
	SendQueue int
	MaxFrame  int64
	MaxConns  int
	// DataDir holds what the sessions API keeps (uploaded agents, session
	// files and settings): the data directory.
	DataDir string
	// Backend, when set, keeps those instead (a cluster's stores).
	Backend backend.Backend
	// Relay and Forwarder make this server one replica of a cluster:
	// turns running on any replica are watched and cancelled from every
	// one, and what a client sends to a running turn reaches it. nil:
	// this process only.
	Relay     live.Relay
	Forwarder live.Forwarder
}

// Server is a running openheim HTTP server.
type Server struct {
	hub      *live.Hub
	fwd      live.Forwarder
	ws       *ws.Server
	sessions *sessionsapi.API
	agents   *host.Dispatch // the external agents sessions are bound to
	http     *http.Server
	log      *slog.Logger
}

// New builds the server; it serves once Serve is called.
func New(opts Options) (*Server, error) {
	if opts.Token == "" && !opts.InsecureNoAuth {
		return nil, errors.New("no token: every request needs one unless authentication is off on purpose")
	}
	if opts.Token == "" && !opts.Loopback {
		return nil, errors.New("serving without a token is allowed on a loopback address only")
	}
	log := opts.Log
	if log == nil {
		log = slog.Default()
	}
	lim := newLimits(opts)
	cfg := opts.Engine.Config
	hub := live.NewHub(context.Background(), opts.Engine)
	if opts.Relay != nil {
		hub.SetRelay(opts.Relay)
	}
	// Sessions bound to an external ACP agent run on it, through every
	// transport; the others on the engine.
	agents := &host.Dispatch{Engine: opts.Engine, Version: opts.Version, Log: log}
	wss := &ws.Server{Engine: opts.Engine, Catalog: opts.Catalog, Hub: hub, Version: opts.Version, Runner: agents, External: agents,
		SendQueue: opts.SendQueue, MaxFrame: opts.MaxFrame, MaxConns: opts.MaxConns, Log: log,
		// The guard has checked the Origin already.
		CheckOrigin: func(*http.Request) bool { return true },
		// A client is whoever holds the token: its sessions stay where the
		// sessions API's do, unless the config says otherwise.
		Policy: &agent.SessionPolicy{Roots: append([]string{cfg.WorkDir}, cfg.Serve.Roots...),
			ClientMCPServers: cfg.Serve.AllowClientMCPServers}}
	api := restAPI(opts, hub, log)
	var reps *replicas
	sopts := sessionsapi.Options{Engine: opts.Engine, Runner: agents, Hub: hub, Store: opts.Engine.Store,
		Catalog: opts.Catalog, DataDir: opts.DataDir, Roots: cfg.Serve.Roots, Backend: opts.Backend, Log: log}
	if opts.Forwarder != nil {
		sopts.Route = func(id string, w http.ResponseWriter, r *http.Request) bool { return reps.route(id, w, r) }
	}
	sessions, err := sessionsapi.New(sopts)
	if err != nil {
		return nil, fmt.Errorf("sessions API: %w", err)
	}
	if opts.Forwarder != nil {
		reps = newReplicas(hub, opts.Forwarder, sessions, lim)
		if err := opts.Forwarder.Serve(hub.CancelHere, reps.serve); err != nil {
			return nil, fmt.Errorf("cluster: %w", err)
		}
	}

	mux := routes(lim, api, sessions, wss)
	return &Server{hub: hub, fwd: opts.Forwarder, ws: wss, sessions: sessions, agents: agents, log: log, http: &http.Server{
		Handler: guard{token: opts.Token, loopbackOnly: opts.Token == "",
			allowedOrigins: cfg.Serve.AllowedOrigins, public: web.IsAsset}.wrap(mux),
		ReadHeaderTimeout: min(headerTimeout, lim.read),
		ReadTimeout:       lim.read,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}}, nil
}

// limits are the time bounds of plain (non-WebSocket, non-SSE) routes.
type limits struct{ read, upload time.Duration }

func newLimits(opts Options) limits {
	lim := limits{read: opts.ReadTimeout, upload: opts.UploadTimeout}
	if lim.read <= 0 {
		lim.read = DefaultReadTimeout
	}
	if lim.upload <= 0 {
		lim.upload = DefaultUploadTimeout
	}
	return lim
}

// restAPI is the REST API under /api.
func restAPI(opts Options, hub *live.Hub, log *slog.Logger) *rest.Server {
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
	return api
}

// routes maps the server's paths: REST, the sessions API, the WebSocket
// endpoints, the health check and the web client.
func routes(lim limits, api *rest.Server, sessions *sessionsapi.API, wss *ws.Server) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("/api/", lim.wrap(api.Handler(), maxBodyBytes, false))
	sessions.Register(mux, lim.wrap)
	mux.Handle("GET /healthz", lim.wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"status":"ok"}` + "\n"))
	}), maxBodyBytes, false))
	mux.HandleFunc("GET /ws", wss.Envelope)
	mux.HandleFunc("GET /acp", wss.Bare)
	// The built-in web client; anything else unknown is a JSON 404.
	mux.Handle("/", lim.wrap(web.Handler(), maxBodyBytes, false))
	return mux
}

// wrap bounds h's body to maxBody bytes (413 past it) and its run to the
// read timeout, the one the server applies to reading every request; an
// upload (a multipart body, on the routes that take one) gets the longer
// upload window to arrive and to be answered. WebSockets are bounded per
// frame and by pings instead, SSE streams by their writes.
func (l limits) wrap(h http.Handler, maxBody int64, upload bool) http.Handler {
	timeout := l.read
	if upload {
		timeout = l.upload
	}
	inner := http.TimeoutHandler(h, timeout, timedOut)
	inner003 := http.TimeoutHandler(h, timeout, timedOut003)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if upload {
			// The server's deadlines are sized for small bodies.
			rc := http.NewResponseController(w)
			rc.SetReadDeadline(time.Now().Add(timeout))
			rc.SetWriteDeadline(time.Now().Add(timeout + writeTimeout))
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		if sessionsAPIPath(r.URL.Path) {
			inner003.ServeHTTP(w, r)
			return
		}
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
		s.agents.Close()
		s.stopForwarding()
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
	s.agents.Close()              // the external agents, their turns ended
	s.stopForwarding()
	werr := s.ws.Shutdown(sctx)
	if errors.Is(herr, http.ErrServerClosed) {
		herr = nil
	}
	return errors.Join(herr, werr)
}

func (s *Server) stopForwarding() {
	if s.fwd != nil {
		s.fwd.Close()
	}
}

// Hub is the server's shared ACP hub (tests watch its turns).
func (s *Server) Hub() *live.Hub { return s.hub }

// Conns reports how many WebSocket connections are open.
func (s *Server) Conns() int { return s.ws.Conns() }
