package sessionsapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/openheim/openheim/runtime/backend"
	"github.com/openheim/openheim/runtime/session"
)

// settings is what the sessions API keeps about a session beside the
// session itself (DataDir/sessions-api/<uuid>.json). Sessions made
// elsewhere (prompt, chat, /ws) have none: the default agent, no labels.
type settings struct {
	AgentID       string            `json:"agent_id"`
	Labels        map[string]string `json:"labels"`
	ModelOverride *string           `json:"model_override"`
	Archived      bool              `json:"archived"`
	ClientTools   []ClientTool      `json:"client_tools,omitempty"`
	// Failed is why the session failed (seed 003's failed state: a turn
	// ended in an error); "" while it has not. A failed session takes no
	// more events; a fork of it starts idle.
	Failed string `json:"failed,omitempty"`
}

// sessionRegistry holds the trackers of the sessions the API is watching
// and their settings.
type sessionRegistry struct {
	api  *API
	docs backend.Docs // the settings, by session uuid

	mu       sync.Mutex
	trackers map[string]*tracker
	closed   bool
}

func newSessionRegistry(api *API, dir string) (*sessionRegistry, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	return newRegistry(api, backend.DocDir(dir)), nil
}

// newRegistry keeps the settings in docs (a cluster's, shared by every
// replica).
func newRegistry(api *API, docs backend.Docs) *sessionRegistry {
	return &sessionRegistry{api: api, docs: docs, trackers: map[string]*tracker{}}
}

// tracker returns session id's tracker, starting it on first use.
func (r *sessionRegistry) tracker(id string) (*tracker, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, &apiError{status: http.StatusServiceUnavailable, msg: "the server is shutting down"}
	}
	if t := r.trackers[id]; t != nil {
		return t, nil
	}
	t, err := newTracker(r.api, id)
	if err != nil {
		return nil, err
	}
	r.trackers[id] = t
	return t, nil
}

// release drops session id's tracker t when nothing needs it any more, so
// a long-running server keeps trackers only for sessions in use; the next
// caller starts a fresh one (there is no replay to lose).
func (r *sessionRegistry) release(id string, t *tracker) {
	r.mu.Lock()
	if r.trackers[id] != t {
		r.mu.Unlock()
		return
	}
	t.mu.Lock()
	idle := !t.closed && t.idleLocked()
	if idle {
		t.retired = true
		delete(r.trackers, id)
	}
	t.mu.Unlock()
	r.mu.Unlock()
	if idle {
		r.api.opts.Hub.Unsubscribe(id, t)
	}
}

// withTracker runs f on session id's tracker, again on a fresh one if the
// first was retired in between.
func (r *sessionRegistry) withTracker(id string, f func(*tracker) error) error {
	for range 2 {
		t, err := r.tracker(id)
		if err != nil {
			return err
		}
		if err := f(t); err != errRetired {
			return err
		}
	}
	return errRetired
}

// errRetired says a tracker was dropped while being used.
var errRetired = errors.New("session tracker retired; retry")

// lookup returns the session's tracker if one runs.
func (r *sessionRegistry) lookup(id string) *tracker {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.trackers[id]
}

// forget closes and drops the session's tracker (the session is deleted).
func (r *sessionRegistry) forget(id string) {
	r.mu.Lock()
	t := r.trackers[id]
	delete(r.trackers, id)
	r.mu.Unlock()
	if t != nil {
		t.close()
	}
}

func (r *sessionRegistry) close() {
	r.mu.Lock()
	r.closed = true
	ts := r.trackers
	r.trackers = map[string]*tracker{}
	r.mu.Unlock()
	for _, t := range ts {
		t.close()
	}
}

// settings reads session id's settings; a session without any has the
// default agent.
func (r *sessionRegistry) settings(id string) (settings, error) {
	s := settings{AgentID: defaultAgentID, Labels: map[string]string{}}
	data, found, err := r.docs.Get(id)
	if err != nil || !found {
		return s, err
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return s, err
	}
	if s.Labels == nil {
		s.Labels = map[string]string{}
	}
	if s.AgentID == "" {
		s.AgentID = defaultAgentID
	}
	return s, nil
}

func (r *sessionRegistry) save(id string, s settings) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return r.docs.Put(id, append(data, '\n'))
}

// archived reports whether session id was archived; only sessions with
// settings can be, so most cost one failed lookup.
func (r *sessionRegistry) archived(id string) bool {
	s, err := r.settings(id)
	return err == nil && s.Archived
}

func (r *sessionRegistry) remove(id string) {
	r.docs.Delete(id)
}

// defaultAgentID is the built-in agent: the config's own model and prompt.
const defaultAgentID = "ag_default"

// convID is the API id of session uuid.
func convID(uuid string) string { return "conv_" + uuid }

// sessionUUID resolves an API session id ("conv_<uuid>") to a stored
// session's uuid; anything else is a 404.
func (a *API) sessionUUID(conv string) (string, error) {
	id, ok := strings.CutPrefix(conv, "conv_")
	if !ok || session.ValidateID(id) != nil {
		return "", notFound("session %q not found", conv)
	}
	if _, err := a.opts.Store.LoadMeta(id); err != nil {
		if errors.Is(err, session.ErrNotFound) {
			return "", notFound("session %q not found", conv)
		}
		return "", err
	}
	return id, nil
}

// agentName is the name model-produced items of session id carry.
func (a *API) agentName(id string) string {
	s, _ := a.sessions.settings(id) // unreadable: the default agent
	ag, _ := a.agentOf(s)
	return ag.Name
}

func (a *API) now() int64 { return a.opts.Now().Unix() }

// unix is t in unix seconds.
func unix(t time.Time) int64 { return t.Unix() }
