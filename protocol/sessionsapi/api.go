// Package sessionsapi serves seed 003's session-first HTTP + SSE API from
// openheim's own runtime: agents (/api/agents), conversations
// (/v1/conversations), sessions (/v1/sessions) with their live event stream,
// and session file resources. A session here is an openheim session: the
// same store, the same live turns as /ws, so a turn started on one is
// watched on the other. Ids: a session is "conv_" + its uuid.
package sessionsapi

import (
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/openheim/openheim/runtime/backend"
	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/history"
	"github.com/openheim/openheim/runtime/live"
	"github.com/openheim/openheim/runtime/session"
	"github.com/openheim/openheim/runtime/sessionfiles"
)

// Defaults of Options.
const (
	DefaultMaxFileBytes   = 32 << 20
	DefaultMaxBundleBytes = 8 << 20
	DefaultHeartbeat      = 15 * time.Second
	// DefaultStreamQueue bounds the events waiting for one slow SSE
	// subscriber; past it the stream is closed (the client reconnects and
	// reconciles with the snapshot).
	DefaultStreamQueue = 4096
)

// Options configure the API.
type Options struct {
	Engine *engine.Engine
	// Runner runs the sessions' turns; nil: Engine. Compaction always
	// runs on Engine.
	Runner  engine.Runner
	Hub     *live.Hub
	Store   session.Store // the sessions, as turns write them (re-indexed on change)
	Catalog *history.Catalog
	// DataDir holds what only this API keeps: uploaded agents
	// (DataDir/agents-api), session files (DataDir/files) and session
	// settings (DataDir/sessions-api), unless Backend keeps them.
	DataDir string
	// Roots are the directories besides the engine's work_dir in which a
	// session's turns may run ([serve] roots): a session begun elsewhere
	// (the CLI in another directory) is refused a turn, as /ws and /acp
	// refuse to load it.
	Roots []string
	// Backend, when set, keeps the agents, files and settings instead (a
	// cluster's stores, shared by every replica).
	Backend backend.Backend
	// Route, when set, is asked first by the handlers that reach a
	// session's running turn (events, elicitation answers): it serves the
	// request on the replica running the turn and returns true, or
	// returns false to serve it here.
	Route          func(id string, w http.ResponseWriter, r *http.Request) bool
	Log            *slog.Logger
	Now            func() time.Time
	MaxFileBytes   int64
	MaxBundleBytes int64
	Heartbeat      time.Duration
	StreamQueue    int
}

// API is the seed 003 API over one engine and hub.
type API struct {
	opts     Options
	log      *slog.Logger
	agents   *agents
	files    sessionfiles.Store
	sessions *sessionRegistry
}

// New opens the API's stores under opts.DataDir.
func New(opts Options) (*API, error) {
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MaxFileBytes <= 0 {
		opts.MaxFileBytes = DefaultMaxFileBytes
	}
	if opts.MaxBundleBytes <= 0 {
		opts.MaxBundleBytes = DefaultMaxBundleBytes
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = DefaultHeartbeat
	}
	if opts.StreamQueue <= 0 {
		opts.StreamQueue = DefaultStreamQueue
	}
	a := &API{opts: opts, log: opts.Log}
	b := opts.Backend
	if b == nil {
		b = &backend.FileBackend{Home: opts.DataDir}
	}
	bundles, err := b.Bundles()
	if err != nil {
		return nil, err
	}
	a.agents = newAgents(bundles, opts.Engine.Config.AgentsDir(), opts.MaxBundleBytes, opts.Now, a.validateAgent)
	if a.files, err = b.Files(opts.MaxFileBytes, opts.Now); err != nil {
		return nil, err
	}
	docs, err := b.Docs("sessions-api")
	if err != nil {
		return nil, err
	}
	a.sessions = newRegistry(a, docs)
	return a, nil
}

// routed serves r on the replica running session id's turn, when that is
// another replica (Options.Route).
func (a *API) routed(id string, w http.ResponseWriter, r *http.Request) bool {
	return a.opts.Route != nil && a.opts.Route(id, w, r)
}

// Limit wraps a plain (non-streaming) handler with a body limit and a time
// limit; upload marks a multipart upload, which gets the long window of a
// big body on a slow link. The server passes its own.
type Limit func(h http.Handler, maxBody int64, upload bool) http.Handler

// Register adds the API's routes to mux, each bounded by limit.
func (a *API) Register(mux *http.ServeMux, limit Limit) {
	for _, r := range a.routes() {
		r.handler = redactErrors(r.handler, a.opts.Engine.Redactor()).ServeHTTP
		mux.Handle(r.pattern, r.limited(limit))
	}
}

// route is one endpoint.
type route struct {
	pattern string // net/http pattern: "METHOD /path/{param}"
	handler http.HandlerFunc
	// upload, when set, is how large a multipart body may be: the route
	// takes uploads. Every other body is JSON, at most jsonBody bytes.
	upload int64
	stream bool // long-lived: no time limit
}

// jsonBody bounds a JSON request body (and any body of a route that takes
// no upload).
const jsonBody = 1 << 20

// limited is the route's handler behind limit: a multipart body on an
// upload route gets the route's own limit and time; any other body the
// JSON limit and the normal time, so a slow JSON body cannot hold a
// request open for an upload's window.
func (r route) limited(limit Limit) http.Handler {
	if r.stream {
		return http.MaxBytesHandler(r.handler, jsonBody)
	}
	small := limit(r.handler, jsonBody, false)
	if r.upload <= 0 {
		return small
	}
	big := limit(r.handler, r.upload, true)
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if isMultipart(req) {
			big.ServeHTTP(w, req)
			return
		}
		small.ServeHTTP(w, req)
	})
}

// isMultipart tells an upload from a JSON body; the handlers use the same
// test, so a body is never read as JSON under an upload's limit.
func isMultipart(r *http.Request) bool {
	return strings.HasPrefix(strings.ToLower(r.Header.Get("Content-Type")), "multipart/")
}

func (a *API) routes() []route {
	var rs []route
	rs = append(rs, a.agentRoutes()...)
	rs = append(rs, a.conversationRoutes()...)
	rs = append(rs, a.sessionRoutes()...)
	rs = append(rs, a.fileRoutes()...)
	rs = append(rs, route{pattern: "GET /v1/openapi.json", handler: serveOpenAPI})
	return rs
}

// Patterns lists the registered routes ("METHOD /path"), for the OpenAPI
// sync test and the docs.
func (a *API) Patterns() []string {
	var out []string
	for _, r := range a.routes() {
		out = append(out, r.pattern)
	}
	return out
}

// Close ends every stream (with data: [DONE]) and the session runners.
func (a *API) Close() { a.sessions.close() }
