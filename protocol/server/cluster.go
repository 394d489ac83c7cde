package server

import (
	"bytes"
	"io"
	"net/http"

	"github.com/openheim/openheim/protocol/sessionsapi"
	"github.com/openheim/openheim/runtime/live"
)

// forwardedHeader marks a request another replica handed over: it is
// served here, never handed on again.
const forwardedHeader = "X-Openheim-Forwarded"

// replicas routes what reaches a running turn to the replica running it:
// the sessions API's events and elicitation answers (a message queued on
// any replica reaches the turn; its interrupt cancels it). Cancels from
// /ws and /acp go through the hub, which asks the relay.
type replicas struct {
	hub *live.Hub
	fwd live.Forwarder
	// local serves forwarded requests: the sessions API's routes, behind
	// the same limits but not the token guard (replicas trust each other
	// through the cluster's credentials).
	local http.Handler
}

func newReplicas(hub *live.Hub, fwd live.Forwarder, api *sessionsapi.API, lim limits) *replicas {
	mux := http.NewServeMux()
	api.Register(mux, lim.wrap)
	return &replicas{hub: hub, fwd: fwd, local: mux}
}

// route implements sessionsapi.Options.Route.
func (c *replicas) route(id string, w http.ResponseWriter, r *http.Request) bool {
	if r.Header.Get(forwardedHeader) != "" {
		return false
	}
	replica, ok := c.hub.RunningElsewhere(id)
	if !ok {
		return false
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, `{"error":"reading the request failed"}`, http.StatusBadRequest)
		return true
	}
	resp, err := c.fwd.Forward(replica, live.Request{Method: r.Method, Path: r.URL.RequestURI(), Body: body})
	if err != nil {
		// The replica is gone (its lease expires soon): serve it here.
		r.Body = io.NopCloser(bytes.NewReader(body))
		return false
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(resp.Status)
	w.Write(resp.Body)
	return true
}

// serve answers a request forwarded by another replica.
func (c *replicas) serve(req live.Request) live.Response {
	r, err := http.NewRequest(req.Method, req.Path, bytes.NewReader(req.Body))
	if err != nil {
		return live.Response{Status: http.StatusBadRequest, Body: []byte(`{"error":"bad forwarded request"}`)}
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set(forwardedHeader, "1")
	rec := &recorder{header: http.Header{}, status: http.StatusOK}
	c.local.ServeHTTP(rec, r)
	return live.Response{Status: rec.status, Body: rec.body.Bytes()}
}

// recorder keeps a handler's answer to hand it back.
type recorder struct {
	header http.Header
	status int
	wrote  bool
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if !r.wrote {
		r.status, r.wrote = status, true
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.body.Write(p)
}
