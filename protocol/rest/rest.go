// Package rest serves seed 000's read-only REST API under /api/: the public
// config, models, skills, tools, MCP server statuses and the stored sessions.
// It has no transport, auth or CORS of its own; the server mounts Handler.
//
// Every response is JSON (errors included, as {"error": "..."}) and is never
// cached. Error bodies are fixed strings: paths, ids and causes go to the log,
// never to the client.
package rest

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/history"
	"github.com/openheim/openheim/runtime/mcp"
)

// Server holds what the handlers read. Its fields are not changed after
// Handler is called; the handlers are safe for concurrent use.
type Server struct {
	Engine *engine.Engine
	// Catalog lists sessions through the index; nil lists with
	// Engine.Store.List().
	Catalog *history.Catalog
	// MCP reports the MCP servers' statuses; nil means none are configured.
	MCP func() []MCPStatus
	// Skills lists the available skill names; nil means none.
	Skills func() []string
	// Cancel stops a session's running turn and returns a channel closed
	// once it ended (the server's hub); nil: no turns run here.
	Cancel func(id string) <-chan struct{}
}

// MCPStatus is seed 000's McpServerStatus, as runtime/mcp reports it.
type MCPStatus = mcp.Status

// Error bodies (seed 000 and this package's own).
const (
	errNotFound         = "not found"
	errMethodNotAllowed = "method not allowed"
	errInvalidSessionID = "invalid session id"
	errSessionNotFound  = "session not found"
	errInvalidLimit     = "invalid limit"
	errInvalidOffset    = "invalid offset"
	errInvalidCwd       = "invalid cwd"
	errInternal         = "internal error"
)

// Handler returns the /api/* routes: GET (and so HEAD), plus PATCH and
// DELETE of a session (openheim's additions for its web client); other
// methods get 405 with an Allow header, unknown paths 404, both with
// JSON bodies.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/config", s.config)
	mux.HandleFunc("GET /api/models", s.models)
	mux.HandleFunc("GET /api/skills", s.skills)
	mux.HandleFunc("GET /api/tools", s.tools)
	mux.HandleFunc("GET /api/mcp-servers", s.mcpServers)
	mux.HandleFunc("GET /api/sessions", s.listSessions)
	mux.HandleFunc("GET /api/sessions/{id}", s.getSession)
	mux.HandleFunc("PATCH /api/sessions/{id}", s.renameSession)
	mux.HandleFunc("DELETE /api/sessions/{id}", s.deleteSession)
	return jsonErrors{mux}
}

// jsonErrors lets the mux decide 404 and 405 (with its Allow header) and
// rewrites the plain-text bodies it would send as JSON. A catch-all "/api/"
// pattern cannot do this: it would match POST /api/config before the mux
// considers the GET pattern, turning every 405 into a 404.
type jsonErrors struct{ mux *http.ServeMux }

func (j jsonErrors) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Handler only finds the route; ServeHTTP is what sets the request's
	// path values, so a match is served by the mux itself.
	if _, pattern := j.mux.Handler(r); pattern != "" {
		j.mux.ServeHTTP(w, r)
		return
	}
	j.mux.ServeHTTP(&errorWriter{ResponseWriter: w}, r)
}

// errorWriter turns the status the mux's 404/405 handler writes into a JSON
// error body and swallows the handler's own text.
type errorWriter struct {
	http.ResponseWriter
	wrote bool
}

func (e *errorWriter) WriteHeader(code int) {
	if e.wrote {
		return
	}
	e.wrote = true
	var msg string
	switch code {
	case http.StatusNotFound:
		msg = errNotFound
	case http.StatusMethodNotAllowed:
		msg = errMethodNotAllowed
	default: // the mux's 400 for a malformed request line
		msg = strings.ToLower(http.StatusText(code))
	}
	writeError(e.ResponseWriter, code, msg)
}

func (e *errorWriter) Write(p []byte) (int, error) {
	if !e.wrote {
		e.WriteHeader(http.StatusNotFound)
	}
	return len(p), nil
}

func (s *Server) config(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, r, http.StatusOK, s.Engine.Config.Public())
}

func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, r, http.StatusOK, s.Engine.Config.Models())
}

func (s *Server) skills(w http.ResponseWriter, r *http.Request) {
	var names []string
	if s.Skills != nil {
		names = s.Skills()
	}
	if names == nil {
		names = []string{}
	}
	writeJSON(w, r, http.StatusOK, names)
}

func (s *Server) tools(w http.ResponseWriter, r *http.Request) {
	s.Engine.WaitMCP(r.Context(), engine.ListWait) // servers still connecting: their tools too
	reg, err := s.Engine.Tools(s.Engine.Config.WorkDir, nil, false)
	if err != nil {
		internalError(w, r, "listing tools", err)
		return
	}
	writeJSON(w, r, http.StatusOK, acp.ToolObjects(reg.Specs()))
}

func (s *Server) mcpServers(w http.ResponseWriter, r *http.Request) {
	s.Engine.WaitMCP(r.Context(), engine.ListWait) // a status, not "connecting"
	var list []MCPStatus
	if s.MCP != nil {
		list = s.MCP()
	}
	if list == nil {
		list = []MCPStatus{}
	}
	writeJSON(w, r, http.StatusOK, list)
}

// writeJSON encodes v fully before writing anything, so an encoding failure
// is a clean 500 rather than a truncated 200.
func writeJSON(w http.ResponseWriter, r *http.Request, code int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		internalError(w, r, "encoding response", err)
		return
	}
	setHeaders(w)
	w.WriteHeader(code)
	w.Write(buf.Bytes())
}

// writeError sends {"error": msg}. msg is one of this package's constants,
// never text derived from an error.
func writeError(w http.ResponseWriter, code int, msg string) {
	b, _ := json.Marshal(struct {
		Error string `json:"error"`
	}{msg})
	setHeaders(w)
	w.Header().Del("Content-Length")
	w.WriteHeader(code)
	w.Write(append(b, '\n'))
}

func internalError(w http.ResponseWriter, r *http.Request, what string, err error) {
	slog.Error("rest: "+what, "method", r.Method, "path", r.URL.Path, "err", err)
	writeError(w, http.StatusInternalServerError, errInternal)
}

func setHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
}
