package host

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/runtime/event"
)

// SessionOptions are what a session on the external agent starts with.
type SessionOptions struct {
	Cwd                   string
	MCPServers            []json.RawMessage // ACP's wire shape (stdio, http or sse)
	AdditionalDirectories []string
	// SystemPrompt replaces the agent's system prompt, AppendSystemPrompt
	// adds to it (seed 002's SystemPromptMetaKey/AppendSystemPromptMetaKey);
	// at most one may be set.
	SystemPrompt       string
	AppendSystemPrompt string
	Meta               map[string]any
}

// Seed 002's reserved _meta keys for system prompts.
const (
	SystemPromptMetaKey       = "systemPrompt"
	AppendSystemPromptMetaKey = "appendSystemPrompt"
)

// hostSession is the host's state of one session on the agent.
type hostSession struct {
	h  *Host
	id string
	// state is the agent's modes, models, options and commands (state.go).
	state sessionState

	mu          sync.Mutex
	thread      []ThreadEntry
	entries     int             // thread entries made, for their ids
	tools       []ToolCallEntry // oldest first
	diffs       []DiffSnapshot  // one per file, oldest first
	permissions []PermissionEntry
	turn        *hostTurn // the running prompt, nil between turns
	split       bool      // a tool call or a prompt came: the next text is a new entry
	echo        bool      // the prompt is recorded: the agent's echo of it is not
}

func (h *Host) session(id string) *hostSession {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sessions[id]
}

// track starts keeping session id (new, loaded, resumed, forked).
func (h *Host) track(id string) *hostSession {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.sessions[id]; s != nil {
		return s
	}
	s := &hostSession{h: h, id: id}
	h.sessions[id] = s
	return s
}

// meta is the session _meta: o.Meta with the system prompt where the agent
// reads it (the projection's place, else seed 002's reserved keys).
func (o SessionOptions) meta(proj Projection) (map[string]any, error) {
	if o.SystemPrompt != "" && o.AppendSystemPrompt != "" {
		return nil, fmt.Errorf("give a system prompt or one to append, not both")
	}
	m := map[string]any{}
	for k, v := range o.Meta {
		m[k] = v
	}
	switch {
	case proj.ProcessPrompt: // given to the process when it started
	case proj.SystemPrompt != nil && o.SystemPrompt != "":
		m = mergeMeta(m, proj.SystemPrompt(true, o.SystemPrompt))
	case proj.SystemPrompt != nil && o.AppendSystemPrompt != "":
		m = mergeMeta(m, proj.SystemPrompt(false, o.AppendSystemPrompt))
	case o.SystemPrompt != "":
		m[SystemPromptMetaKey] = o.SystemPrompt
	case o.AppendSystemPrompt != "":
		m[AppendSystemPromptMetaKey] = o.AppendSystemPrompt
	}
	if len(m) == 0 {
		return nil, nil
	}
	return m, nil
}

// sessionParams is what session/new, load, resume and fork send.
type sessionParams struct {
	SessionID             string            `json:"sessionId,omitempty"`
	Cwd                   string            `json:"cwd"`
	MCPServers            []json.RawMessage `json:"mcpServers"`
	AdditionalDirectories []string          `json:"additionalDirectories,omitempty"`
	Meta                  map[string]any    `json:"_meta,omitempty"`
}

func (h *Host) params(id string, o SessionOptions, withMeta bool) (sessionParams, error) {
	p := sessionParams{SessionID: id, Cwd: o.Cwd, MCPServers: o.MCPServers}
	if p.MCPServers == nil {
		p.MCPServers = []json.RawMessage{} // written as [], never null
	}
	if p.Cwd == "" {
		p.Cwd = h.opts.WorkDir
	}
	if len(o.AdditionalDirectories) > 0 {
		if !present(h.info.caps.SessionCapabilities.AdditionalDirectories) {
			return p, h.lacks("additionalDirectories")
		}
		p.AdditionalDirectories = o.AdditionalDirectories
	}
	if withMeta {
		m, err := o.meta(h.opts.Projection)
		if err != nil {
			return p, err
		}
		p.Meta = m
	}
	// On every session the agent opens (load and fork included: Claude
	// Code builds its options afresh each time).
	p.Meta = mergeMeta(p.Meta, h.opts.Projection.SessionMeta)
	return p, nil
}

// lacks is the error for a call the agent did not advertise.
func (h *Host) lacks(what string) error {
	return &UnsupportedError{Agent: h.spec.Name, What: what}
}

// NewSession creates a session on the agent.
func (h *Host) NewSession(ctx context.Context, o SessionOptions) (string, error) {
	p, err := h.params("", o, true)
	if err != nil {
		return "", err
	}
	var raw json.RawMessage
	if err := h.call(ctx, acp.MethodSessionNew, p, &raw); err != nil {
		h.hook(SessionEvent{Type: "created", Agent: h.spec.Name, Err: err})
		return "", err
	}
	return h.adopt(ctx, acp.MethodSessionNew, "created", raw)
}

// adopt takes the session an answer to method (session/new, session/fork)
// made: tracked with the state the answer reports, kept in a mode inside
// openheim's rules, and told to the hook as typ.
func (h *Host) adopt(ctx context.Context, method, typ string, raw json.RawMessage) (string, error) {
	var resp struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		h.hook(SessionEvent{Type: typ, Agent: h.spec.Name, Err: err})
		return "", err
	}
	if resp.SessionID == "" {
		return "", fmt.Errorf("acp agent %s: %s returned no sessionId", h.spec.Name, method)
	}
	h.track(resp.SessionID).state.absorb(raw)
	if err := h.keepSafeMode(ctx, resp.SessionID, raw); err != nil {
		h.forget(resp.SessionID)
		return "", err
	}
	h.hook(SessionEvent{Type: typ, SessionID: resp.SessionID, Agent: h.spec.Name})
	return resp.SessionID, nil
}

// LoadSession reopens a session, the agent replaying its history (which
// the host keeps in the read model only).
func (h *Host) LoadSession(ctx context.Context, id string, o SessionOptions) error {
	if !h.info.caps.LoadSession {
		return h.lacks("session/load")
	}
	return h.reopen(ctx, acp.MethodSessionLoad, "loaded", id, o, false)
}

// ResumeSession reopens a session without a replay.
func (h *Host) ResumeSession(ctx context.Context, id string, o SessionOptions) error {
	if !present(h.info.caps.SessionCapabilities.Resume) {
		return h.lacks("session/resume")
	}
	return h.reopen(ctx, acp.MethodSessionResume, "resumed", id, o, true)
}

func (h *Host) reopen(ctx context.Context, method, kind, id string, o SessionOptions, withMeta bool) error {
	p, err := h.params(id, o, withMeta)
	if err != nil {
		return err
	}
	s := h.track(id)
	var resp json.RawMessage
	err = h.call(ctx, method, p, &resp)
	if err == nil {
		s.state.absorb(resp)
		err = h.keepSafeMode(ctx, id, resp)
	}
	h.hook(SessionEvent{Type: kind, SessionID: id, Agent: h.spec.Name, Err: err})
	return err
}

// Reattach reopens session id by load when the agent can, else resume.
func (h *Host) Reattach(ctx context.Context, id string, o SessionOptions) error {
	if h.info.caps.LoadSession {
		return h.LoadSession(ctx, id, o)
	}
	if present(h.info.caps.SessionCapabilities.Resume) {
		return h.ResumeSession(ctx, id, o)
	}
	return h.lacks("session/load or session/resume")
}

// ForkSession copies a session into a new one and returns its id.
func (h *Host) ForkSession(ctx context.Context, id string, o SessionOptions) (string, error) {
	if !present(h.info.caps.SessionCapabilities.Fork) {
		return "", h.lacks("session/fork")
	}
	p, err := h.params(id, o, false)
	if err != nil {
		return "", err
	}
	var raw json.RawMessage
	if err := h.call(ctx, "session/fork", p, &raw); err != nil {
		return "", err
	}
	return h.adopt(ctx, "session/fork", "forked", raw)
}

// maxListPages bounds following an agent's cursors.
const maxListPages = 100

// ListSessions lists the agent's sessions (in cwd, when given), following
// its cursors.
func (h *Host) ListSessions(ctx context.Context, cwd string) ([]acp.SessionInfo, error) {
	if !present(h.info.caps.SessionCapabilities.List) {
		return nil, h.lacks("session/list")
	}
	var out []acp.SessionInfo
	var cursor *string
	for range maxListPages {
		var resp acp.ListSessionsResponse
		if err := h.call(ctx, acp.MethodSessionList, acp.ListSessionsRequest{CWD: cwd, Cursor: cursor}, &resp); err != nil {
			return out, err
		}
		out = append(out, resp.Sessions...)
		if resp.NextCursor == nil || *resp.NextCursor == "" {
			return out, nil
		}
		cursor = resp.NextCursor
	}
	return out, fmt.Errorf("acp agent %s: session/list did not end after %d pages", h.spec.Name, maxListPages)
}

// CloseSession ends a session on the agent (its terminals too).
func (h *Host) CloseSession(ctx context.Context, id string) error {
	if !present(h.info.caps.SessionCapabilities.Close) {
		return h.lacks("session/close")
	}
	h.terms.releaseSession(id)
	err := h.call(ctx, acp.MethodSessionClose, acp.CloseSessionRequest{SessionID: id}, nil)
	h.forget(id)
	h.hook(SessionEvent{Type: "closed", SessionID: id, Agent: h.spec.Name, Err: err})
	return err
}

// DeleteSession removes a session from the agent's storage.
func (h *Host) DeleteSession(ctx context.Context, id string) error {
	if !present(h.info.caps.SessionCapabilities.Delete) {
		return h.lacks("session/delete")
	}
	h.terms.releaseSession(id)
	err := h.call(ctx, acp.MethodSessionDelete, acp.DeleteSessionRequest{SessionID: id}, nil)
	h.forget(id)
	h.hook(SessionEvent{Type: "deleted", SessionID: id, Agent: h.spec.Name, Err: err})
	return err
}

func (h *Host) forget(id string) {
	h.mu.Lock()
	delete(h.sessions, id)
	h.mu.Unlock()
}

// update takes one session/update: into the read model, and to the
// running turn as an event. It decodes leniently: a field that does not
// decode is reported (protocol error) and the rest is used.
func (s *hostSession) update(raw json.RawMessage) {
	u, err := acp.DecodeUpdate(raw)
	if err != nil {
		s.h.protocolError(acp.MethodSessionUpdate, s.id, raw, err)
		if !acp.Partial(err) {
			return
		}
	}
	ev, ok := acp.EventFromUpdate(s.id, u)
	s.mu.Lock()
	ev = s.remember(ev, ok)
	t := s.turn
	if ok && t != nil {
		// Queued under mu (Emit never blocks): a turn ending meanwhile
		// (awaitCalls, then s.turn = nil) sees a call's end recorded only
		// with its event queued.
		t.emit(ev)
	}
	s.mu.Unlock()
	if ok && t != nil && ev.Tool != nil && (ev.Tool.Status == event.StatusCompleted || ev.Tool.Status == event.StatusFailed) {
		select {
		case t.callEnded <- struct{}{}:
		default:
		}
	}
}
