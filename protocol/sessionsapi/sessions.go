package sessionsapi

import (
	"encoding/json"
	"errors"
	"io/fs"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/openheim/openheim/runtime/bundle"
	"github.com/openheim/openheim/runtime/confine"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/permission"
	"github.com/openheim/openheim/runtime/session"
)

// SessionResponse is seed 003's session snapshot. Fields of seed 003 that
// belong to its runner/host product (runner_id, external_session_id) are
// always null here; pending_inputs, todos and terminal_pending are always
// empty. List entries leave out items and the snapshot-only fields.
type SessionResponse struct {
	ID                string            `json:"id"`
	Object            string            `json:"object"`
	AgentID           string            `json:"agent_id"`
	AgentName         *string           `json:"agent_name"`
	Status            string            `json:"status"`
	CreatedAt         int64             `json:"created_at"`
	UpdatedAt         int64             `json:"updated_at"`
	Title             *string           `json:"title"`
	Labels            map[string]string `json:"labels"`
	Model             string            `json:"model"` // provider/model the next turn uses
	ModelOverride     *string           `json:"model_override"`
	Workspace         string            `json:"workspace"`
	Archived          bool              `json:"archived"`
	RunnerID          *string           `json:"runner_id"`
	ExternalSessionID *string           `json:"external_session_id"`
	CostControl       *string           `json:"cost_control_mode_override"` // always null
	GitBranch         *string           `json:"git_branch"`                 // always null
	// TotalCostUSD is what the session's model calls cost, from the
	// config's [prices]; null when a model it used has no price.
	TotalCostUSD        *float64          `json:"total_cost_usd"`
	Items               *[]Item           `json:"items,omitempty"`
	PendingElicitations *[]map[string]any `json:"pending_elicitations,omitempty"`
	PendingInputs       *[]any            `json:"pending_inputs,omitempty"`
	Todos               *[]any            `json:"todos,omitempty"`
	TerminalPending     *bool             `json:"terminal_pending,omitempty"`
}

func (a *API) sessionRoutes() []route {
	return []route{
		{pattern: "POST /v1/sessions", handler: a.handleCreateSession, upload: a.opts.MaxBundleBytes + jsonBody + bundleFormSlack},
		{pattern: "GET /v1/sessions", handler: a.handleListSessions},
		{pattern: "GET /v1/sessions/{session_id}", handler: a.handleGetSession},
		{pattern: "PATCH /v1/sessions/{session_id}", handler: a.handlePatchSession},
		{pattern: "DELETE /v1/sessions/{session_id}", handler: a.handleDeleteSession},
		{pattern: "GET /v1/sessions/{session_id}/items", handler: a.handleSessionItems},
		{pattern: "POST /v1/sessions/{session_id}/events", handler: a.handlePostEvent},
		{pattern: "GET /v1/sessions/{session_id}/stream", handler: a.handleStream, stream: true},
		{pattern: "POST /v1/sessions/{session_id}/fork", handler: a.handleFork},
		{pattern: "POST /v1/sessions/{session_id}/elicitations/{elicitation_id}/resolve", handler: a.handleResolve},
	}
}

// snapshot builds the session's SessionResponse; withItems includes the
// committed items and the snapshot-only fields.
func (a *API) snapshot(id string, withItems bool) (SessionResponse, error) {
	var meta *session.Meta
	var msgs []message.Message
	if withItems {
		conv, err := a.opts.Store.Load(id)
		if err != nil {
			return SessionResponse{}, err
		}
		meta, msgs = &conv.Meta, conv.Messages
	} else {
		m, err := a.opts.Store.LoadMeta(id)
		if err != nil {
			return SessionResponse{}, err
		}
		meta = m
	}
	s, err := a.sessions.settings(id)
	if err != nil {
		return SessionResponse{}, err
	}
	r := SessionResponse{ID: convID(id), Object: "session", AgentID: s.AgentID, Status: statusIdle,
		CreatedAt: unix(meta.CreatedAt), UpdatedAt: unix(meta.UpdatedAt), Title: meta.Title, Labels: s.Labels,
		ModelOverride: s.ModelOverride, Workspace: deref(meta.Cwd), Archived: s.Archived}
	ag, found := a.agentOf(s)
	if found {
		r.AgentName = &ag.Name
	}
	if t := a.sessions.lookup(id); t != nil {
		r.Status = t.status()
	} else if a.opts.Hub.IsRunning(id) {
		r.Status = statusRunning
	} else if s.Failed != "" {
		r.Status = statusFailed
	}
	r.Model = a.nextModel(s, ag, meta)
	r.TotalCostUSD = a.cost(meta, r.Model)
	if withItems {
		items := itemsOf(id, msgs, ag.Name)
		if items == nil {
			items = []Item{}
		}
		pending := []map[string]any{}
		if t := a.sessions.lookup(id); t != nil {
			pending = t.pendingElicitations()
		}
		empty, no := []any{}, false
		r.Items, r.PendingElicitations, r.PendingInputs, r.Todos, r.TerminalPending = &items, &pending, &empty, &empty, &no
	}
	return r, nil
}

// cost is what session meta's model calls cost in US dollars: nil when a
// model it used has no price (or, before its first call, the model of its
// next turn).
func (a *API) cost(meta *session.Meta, next string) *float64 {
	cfg := a.opts.Engine.Config
	total := 0.0
	if len(meta.UsageByModel) == 0 {
		if _, ok := cfg.PriceOf(next); !ok {
			return nil
		}
	}
	for model, u := range meta.UsageByModel {
		p, ok := cfg.PriceOf(model)
		if !ok {
			return nil
		}
		total += p.Cost(u)
	}
	return &total
}

// nextModel is "provider/model" as the session's next turn resolves it.
func (a *API) nextModel(s settings, ag Agent, meta *session.Meta) string {
	if provider, model, err := a.modelFor(s, ag); err == nil && model != "" {
		return provider + "/" + model
	}
	if meta.Provider != nil && meta.Model != nil {
		return *meta.Provider + "/" + *meta.Model
	}
	if r, err := a.opts.Engine.Config.Resolve("", ""); err == nil {
		return r.ProviderName + "/" + r.Model
	}
	return ""
}

func (a *API) handleGetSession(w http.ResponseWriter, r *http.Request) {
	id, err := a.sessionUUID(r.PathValue("session_id"))
	if err != nil {
		writeError(w, err)
		return
	}
	withItems := r.URL.Query().Get("include_items") != "false"
	snap, err := a.snapshot(id, true)
	if err != nil {
		writeError(w, err)
		return
	}
	if !withItems {
		empty := []Item{}
		snap.Items = &empty
	}
	writeJSON(w, http.StatusOK, snap)
}

func (a *API) handleSessionItems(w http.ResponseWriter, r *http.Request) {
	id, err := a.sessionUUID(r.PathValue("session_id"))
	if err != nil {
		writeError(w, err)
		return
	}
	a.writeItems(w, r, id)
}

// writeItems answers with a page of session id's items.
func (a *API) writeItems(w http.ResponseWriter, r *http.Request, id string) {
	p, err := parsePage(r.URL.Query(), "asc")
	if err != nil {
		writeError(w, err)
		return
	}
	conv, err := a.opts.Store.Load(id)
	if err != nil {
		writeError(w, err)
		return
	}
	items := itemsOf(id, conv.Messages, a.agentName(id))
	page, err := paginate(items, func(it Item) string { return it.ID }, p)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, page)
}

// patchRequest is PATCH /v1/sessions/{id}. Seed 003's runner and native
// terminal fields are refused: openheim runs sessions in-process.
type patchRequest struct {
	Title              *string            `json:"title"`
	Labels             map[string]*string `json:"labels"`
	ModelOverride      *string            `json:"model_override"`
	Archived           *bool              `json:"archived"`
	RunnerID           json.RawMessage    `json:"runner_id"`
	ReasoningEffort    json.RawMessage    `json:"reasoning_effort"`
	CollaborationMode  json.RawMessage    `json:"collaboration_mode"`
	CostControl        json.RawMessage    `json:"cost_control_mode_override"`
	ExternalSessionID  json.RawMessage    `json:"external_session_id"`
	TerminalLaunchArgs json.RawMessage    `json:"terminal_launch_args"`
}

// unsupported refuses fields of seed 003's runner/host product.
func unsupported(fields map[string]json.RawMessage) error {
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		if v := fields[name]; len(v) > 0 && string(v) != "null" {
			return badRequest("%s is not supported: openheim runs sessions in-process, without runners, hosts or native terminals", name)
		}
	}
	return nil
}

func (a *API) handlePatchSession(w http.ResponseWriter, r *http.Request) {
	id, err := a.sessionUUID(r.PathValue("session_id"))
	if err != nil {
		writeError(w, err)
		return
	}
	var req patchRequest
	if err := decodeJSON(r, &req); err != nil {
		writeError(w, err)
		return
	}
	if err := unsupported(map[string]json.RawMessage{"runner_id": req.RunnerID, "reasoning_effort": req.ReasoningEffort,
		"collaboration_mode": req.CollaborationMode, "cost_control_mode_override": req.CostControl,
		"external_session_id": req.ExternalSessionID, "terminal_launch_args": req.TerminalLaunchArgs}); err != nil {
		writeError(w, err)
		return
	}
	s, err := a.sessions.settings(id)
	if err != nil {
		writeError(w, err)
		return
	}
	if req.ModelOverride != nil {
		v := strings.TrimSpace(*req.ModelOverride)
		switch v {
		case "":
			writeError(w, badRequest(`model_override must not be empty; clear it with "default", "off" or "reset"`))
			return
		case "default", "off", "reset":
			s.ModelOverride = nil
		default:
			if _, err := a.resolve("", v); err != nil {
				writeError(w, badRequest("model_override: %v", err))
				return
			}
			s.ModelOverride = &v
		}
	}
	for k, v := range req.Labels {
		if v == nil {
			delete(s.Labels, k)
		} else {
			s.Labels[k] = *v
		}
	}
	if req.Archived != nil {
		s.Archived = *req.Archived
	}
	if req.Title != nil {
		if err := a.setTitle(id, *req.Title); err != nil {
			writeError(w, err)
			return
		}
	}
	if err := a.sessions.save(id, s); err != nil {
		writeError(w, err)
		return
	}
	a.writeSnapshot(w, http.StatusOK, id)
}

// writeSnapshot answers with session id's snapshot, items included.
func (a *API) writeSnapshot(w http.ResponseWriter, status int, id string) {
	snap, err := a.snapshot(id, true)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, status, snap)
}

// setTitle renames session id.
func (a *API) setTitle(id, title string) error {
	if strings.TrimSpace(title) == "" {
		return badRequest("title must not be empty")
	}
	m, err := a.opts.Store.LoadMeta(id)
	if err != nil {
		return err
	}
	m.Title = session.Str(session.Title(title))
	m.UpdatedAt = a.opts.Now().UTC()
	return a.opts.Store.SaveMeta(*m)
}

func (a *API) handleDeleteSession(w http.ResponseWriter, r *http.Request) {
	conv := r.PathValue("session_id")
	if err := a.deleteSession(conv); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": conv, "object": "session.deleted", "deleted": true})
}

// deleteSession cancels the session's turn, waits for it to save, and
// moves the session to the trash (history/trash, as `sessions rm` does);
// its files and settings go, and its streams end with [DONE].
func (a *API) deleteSession(conv string) error {
	id, err := a.sessionUUID(conv)
	if err != nil {
		return err
	}
	if t := a.sessions.lookup(id); t != nil {
		t.interrupt()
	}
	<-a.opts.Hub.Cancel(id)
	set, _ := a.sessions.settings(id)
	if err := a.opts.Catalog.Store.Trash(id); err != nil {
		return err
	}
	a.opts.Catalog.MarkDirty(id)
	a.sessions.forget(id)
	a.sessions.remove(id)
	if ag, err := a.agents.get(set.AgentID); err == nil && ag.Kind == bundle.KindSession {
		a.dropAgent(ag.ID) // it belonged to the session
	}
	if err := a.files.RemoveAll(id); err != nil {
		a.log.Warn("sessions api: removing a deleted session's files", "session", id, "err", err)
	}
	return nil
}

// workspace resolves a requested workspace inside work_dir, through the
// work directory's root: the answer is the real path of a directory that
// was inside when looked at, links resolved inside only.
func (a *API) workspace(dir *string) (string, error) {
	root := a.opts.Engine.Config.WorkDir
	if dir == nil || *dir == "" {
		return root, nil
	}
	r, err := confine.Open(root)
	if err != nil {
		return "", err
	}
	defer r.Close()
	name, err := r.Real(*dir)
	if errors.Is(err, confine.ErrOutside) {
		return "", badRequest("workspace %q is outside the work directory %s", *dir, root)
	}
	if err != nil {
		return "", badRequest("workspace %q: %v", *dir, err)
	}
	fi, err := r.Stat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return "", badRequest("workspace %q: no such directory", *dir)
	}
	if err != nil || !fi.IsDir() {
		return "", badRequest("workspace %q is not a directory", *dir)
	}
	return r.Abs(name), nil
}

// recheckWorkspace refuses a turn in a workspace below work_dir that no
// longer is the directory it was: one replaced by a link since (a rename
// over the fs channel can do that) would otherwise root the turn's tools
// wherever the link points. A cwd outside work_dir (a session begun by
// the CLI elsewhere) must lie in one of the roots.
func (a *API) recheckWorkspace(cwd string) error {
	root := a.opts.Engine.Config.WorkDir
	if cwd == "" || cwd == root {
		return nil
	}
	r, err := confine.Open(root)
	if err != nil {
		return err
	}
	defer r.Close()
	name, err := r.Name(cwd)
	if errors.Is(err, confine.ErrOutside) {
		for _, root := range a.opts.Roots {
			if permission.Within(root, cwd) {
				return nil
			}
		}
		return badRequest("workspace %s is outside the directories this server runs turns in (%s); "+
			"add it to roots under [serve] in the config to allow it", cwd, strings.Join(append([]string{root}, a.opts.Roots...), ", "))
	}
	if real, rerr := r.Real(cwd); err != nil || rerr != nil || real != name {
		return badRequest("workspace %s is no longer a directory of the work directory", cwd)
	}
	if fi, err := r.Lstat(name); err != nil || !fi.IsDir() {
		return badRequest("workspace %s is no longer a directory of the work directory", cwd)
	}
	return nil
}

// sessionWorkspaceOK says to the client, before its message is queued,
// what the turn would be refused for (see recheckWorkspace).
func (a *API) sessionWorkspaceOK(id string) error {
	meta, err := a.opts.Store.LoadMeta(id)
	if err != nil {
		return err
	}
	return a.recheckWorkspace(deref(meta.Cwd))
}
