package acptest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/openheim/openheim/protocol/jsonrpc"
)

// ListPageSize is the session/list page size: small, so that a host which
// ignores nextCursor misses sessions as soon as a test has three.
const ListPageSize = 2

type sessionParams struct {
	SessionID  string            `json:"sessionId"`
	CWD        string            `json:"cwd"`
	MCPServers []json.RawMessage `json:"mcpServers"`
}

func decode(params json.RawMessage, v any) error {
	if err := json.Unmarshal(params, v); err != nil {
		return jsonrpc.NewError(jsonrpc.InvalidParams, err.Error())
	}
	return nil
}

// notFound is the error claude-agent-acp gives for an unknown session.
func notFound(id string) error {
	return &jsonrpc.Error{Code: jsonrpc.ResourceNotFound, Message: "Resource not found: " + id, Data: map[string]any{"uri": id}}
}

// addSession must be called with a.mu held.
func (a *agent) addSession(cwd string) *session {
	a.nextID++
	id := fmt.Sprintf("fake-%d", a.nextID)
	if a.script.LoadUnknown {
		// Ids outlive the process: those of another one must not clash.
		id = fmt.Sprintf("fake-%d-%d", os.Getpid(), a.nextID)
	}
	s := &session{id: id, cwd: cwd, updatedAt: time.Now().UTC(), turns: map[int]chan struct{}{},
		settings: defaultSettings()}
	a.sessions[s.id] = s
	a.order = append(a.order, s.id)
	return s
}

func (a *agent) lookup(id string) (*session, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.sessions[id]
	if !ok {
		return nil, notFound(id)
	}
	return s, nil
}

func (a *agent) newSession(params json.RawMessage) (any, error) {
	var p sessionParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if err := a.checkAuth(); err != nil {
		return nil, err
	}
	if p.CWD == "" || p.MCPServers == nil {
		// Both are required by the schema; real agents reject their absence.
		return nil, jsonrpc.NewError(jsonrpc.InvalidParams, "cwd and mcpServers are required")
	}
	a.mu.Lock()
	s := a.addSession(p.CWD)
	a.mu.Unlock()
	return a.withSettings(s.id, a.withModes(map[string]any{"sessionId": s.id})), nil
}

// withModes adds Script.SessionModes to a session/new, load or resume
// answer.
func (a *agent) withModes(m map[string]any) map[string]any {
	if a.script.SessionModes != nil {
		m["modes"] = a.script.SessionModes
	}
	return m
}

// loadSession serves session/load (replaying Script.LoadReplay) and
// session/resume (which never replays).
func (a *agent) loadSession(ctx context.Context, method string, params json.RawMessage) (any, error) {
	var p sessionParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if err := a.checkAuth(); err != nil {
		return nil, err
	}
	if _, err := a.lookup(p.SessionID); err != nil {
		if !a.script.LoadUnknown || p.SessionID == "" {
			return nil, err
		}
		a.mu.Lock()
		s := &session{id: p.SessionID, cwd: p.CWD, updatedAt: time.Now().UTC(), turns: map[int]chan struct{}{}, settings: defaultSettings()}
		a.sessions[s.id] = s
		a.order = append(a.order, s.id)
		a.mu.Unlock()
	}
	if method == "session/load" {
		for _, u := range a.script.LoadReplay {
			a.update(p.SessionID, u)
		}
	}
	return a.withSettings(p.SessionID, a.withModes(map[string]any{})), nil
}

func (a *agent) forkSession(params json.RawMessage) (any, error) {
	var p sessionParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if err := a.checkAuth(); err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	src, ok := a.sessions[p.SessionID]
	switch {
	case !ok && a.script.LoadUnknown: // kept by an earlier process
		src = &session{cwd: p.CWD, settings: defaultSettings()}
	case !ok:
		return nil, notFound(p.SessionID)
	}
	cwd := p.CWD
	if cwd == "" {
		cwd = src.cwd
	}
	fork := a.addSession(cwd)
	fork.settings = src.settings
	a.mu.Unlock()
	defer a.mu.Lock()
	return a.withSettings(fork.id, map[string]any{"sessionId": fork.id}), nil
}

func (a *agent) listSessions(params json.RawMessage) (any, error) {
	var p struct {
		CWD    string  `json:"cwd"`
		Cursor *string `json:"cursor"`
	}
	if len(params) > 0 {
		if err := decode(params, &p); err != nil {
			return nil, err
		}
	}
	start := 0
	if p.Cursor != nil {
		n, err := strconv.Atoi(*p.Cursor)
		if err != nil || n < 0 {
			return nil, jsonrpc.NewError(jsonrpc.InvalidParams, "bad cursor")
		}
		start = n
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	var match []*session
	for _, id := range a.order {
		if s := a.sessions[id]; s != nil && (p.CWD == "" || s.cwd == p.CWD) {
			match = append(match, s)
		}
	}
	sessions := []map[string]any{}
	for i := start; i < len(match) && i < start+ListPageSize; i++ {
		s := match[i]
		sessions = append(sessions, map[string]any{
			"sessionId": s.id, "cwd": s.cwd,
			"title": "Fake session " + s.id, "updatedAt": s.updatedAt.Format(time.RFC3339),
		})
	}
	res := map[string]any{"sessions": sessions}
	if start+ListPageSize < len(match) {
		// The cursor is opaque to hosts; an index is enough here.
		res["nextCursor"] = strconv.Itoa(start + ListPageSize)
	}
	return res, nil
}

// closeSession serves session/close (the session stays loadable, its
// running prompts are cancelled) and session/delete (it becomes unknown).
func (a *agent) closeSession(method string, params json.RawMessage) (any, error) {
	var p sessionParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if _, err := a.lookup(p.SessionID); err != nil && !a.script.LoadUnknown {
		return nil, err
	}
	a.cancelTurns(p.SessionID)
	if method == "session/delete" {
		a.mu.Lock()
		delete(a.sessions, p.SessionID)
		for i, id := range a.order {
			if id == p.SessionID {
				a.order = append(a.order[:i:i], a.order[i+1:]...)
				break
			}
		}
		a.mu.Unlock()
	}
	return map[string]any{}, nil
}

func (a *agent) cancelTurns(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.sessions[id]
	if !ok {
		return
	}
	if len(s.turns) == 0 && a.promptsRead > a.promptsStarted {
		s.earlyCancel = a.promptsRead
	}
	for n, ch := range s.turns {
		close(ch)
		delete(s.turns, n)
	}
}

// startTurn registers a running prompt; the channel is closed by
// session/cancel or session/close, or at once when a cancel for this
// session overtook the prompt.
func (a *agent) startTurn(s *session) (cancelled <-chan struct{}, end func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.promptsStarted++
	seq := a.promptsStarted
	s.nextTurn++
	n, ch := s.nextTurn, make(chan struct{})
	s.turns[n] = ch
	if s.earlyCancel > 0 {
		if seq <= s.earlyCancel {
			close(ch)
			delete(s.turns, n)
		}
		s.earlyCancel = 0
	}
	s.updatedAt = time.Now().UTC()
	return ch, func() {
		a.mu.Lock()
		delete(s.turns, n)
		a.mu.Unlock()
	}
}
