package host

import (
	"encoding/json"
	"time"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/runtime/event"
)

// What the host learns from the agent's permission requests: the call
// asked about, when the agent had not announced it (Codex asks before it
// sends the call's tool_call, and never sends one for a call refused), and
// the answer, so that a refused call ends failed rather than open.

// announce brings the call of a permission request into the read model
// and the running turn's stream, as a tool_call, when the agent has not
// announced it; the agent's own tool_call for it later is then an update.
func (h *Host) announce(r acp.RequestPermissionRequest) {
	s := h.session(r.SessionID)
	if s == nil || r.ToolCall.ToolCallID == "" {
		return
	}
	u, err := r.ToolCall.Update()
	if err != nil {
		h.protocolError(acp.MethodRequestPermission, r.SessionID, r.ToolCall.Content, err)
	}
	ev, ok := acp.EventFromUpdate(s.id, u)
	s.mu.Lock()
	if s.find(r.ToolCall.ToolCallID) != nil || s.turn == nil {
		s.mu.Unlock()
		return
	}
	ev = s.remember(ev, ok)
	t := s.turn
	s.mu.Unlock()
	t.emit(ev)
}

// allowKinds are the option kinds that let a call run.
var allowKinds = map[string]bool{acp.PermissionAllowOnce: true, acp.PermissionAllowAlways: true}

// recordPermission keeps a permission request and its answer; a call
// answered with a reject option, or not at all, is marked refused.
func (s *hostSession) recordPermission(r acp.RequestPermissionRequest, resp acp.RequestPermissionResponse) {
	s.mu.Lock()
	defer s.mu.Unlock()
	allowed := false
	if id, ok := resp.Selected(); ok {
		for _, o := range r.Options {
			allowed = allowed || (o.OptionID == id && allowKinds[o.Kind])
		}
	}
	p := PermissionEntry{ToolCallID: r.ToolCall.ToolCallID, Title: r.ToolCall.Title, Kind: r.ToolCall.Kind,
		Options: r.Options, Outcome: resp.Outcome.Outcome, OptionID: resp.Outcome.OptionID, At: time.Now()}
	if e := s.find(r.ToolCall.ToolCallID); e != nil {
		e.Refused = !allowed
		p.Target, p.Operation = e.Target, e.ID
		if p.Title == "" {
			p.Title = e.Title
		}
	} else {
		p.Target = targetOf(&ToolCallEntry{Kind: r.ToolCall.Kind, RawInput: r.ToolCall.RawInput}).Value
	}
	s.permissions = append(s.permissions, p)
	if max := limitOr(s.h.opts.Limits.MaxPermissionEntries, DefaultMaxPermissionEntries); len(s.permissions) > max {
		s.permissions = append(s.permissions[:0], s.permissions[len(s.permissions)-max:]...)
	}
}

// refusedOutput is the result of a call that never ran because openheim
// refused it, when the agent does not end the call itself.
var refusedOutput = json.RawMessage(`"Not run: openheim refused the agent's permission request for this call."`)

// endRefused ends, as failed, the calls of turn turnID that were refused
// and that the agent left open: it returns their final updates. mu is
// held.
func (s *hostSession) endRefused(turnID string) []event.Event {
	var out []event.Event
	now := time.Now()
	for i := range s.tools {
		e := &s.tools[i]
		if e.TurnID != turnID || !e.Refused || e.Status == event.StatusCompleted || e.Status == event.StatusFailed {
			continue
		}
		t := event.ToolCallInfo{ID: e.ID, Status: event.StatusFailed, RawOutput: refusedOutput}
		merge(e, &t, now)
		fill(&t, e)
		out = append(out, event.Event{SessionID: s.id, Kind: event.ToolCallUpdate, Tool: &t})
	}
	return out
}

// lateCallGrace bounds how long a turn the agent has answered waits for
// its tool calls still open. ACP wants every update before the answer,
// but codex-acp sometimes sends a command's end just after it (under
// load): without the wait that end was lost and the call stored as one
// the turn ended before. A well-behaved agent never makes a turn wait.
const lateCallGrace = 500 * time.Millisecond

// awaitCalls waits, at most grace, until turn t has no tool call open
// (neither completed nor failed, nor refused: endRefused ends those); not
// at all once the turn is cancelled or the agent has gone.
func (s *hostSession) awaitCalls(t *hostTurn, grace time.Duration) {
	timer := time.NewTimer(grace)
	defer timer.Stop()
	for t.asks.Err() == nil {
		open := s.openCalls(t.id)
		if len(open) == 0 {
			return
		}
		select {
		case <-t.callEnded:
		case <-t.asks.Done():
			return
		case <-s.h.exited:
			return
		case <-timer.C:
			// An agent doing this every turn costs each turn the grace:
			// say so (how many: their ids are content, see CaptureContent).
			s.h.log.Debug("acp host: the agent answered with tool calls it never ended", "session", s.id, "open_calls", len(open))
			return
		}
	}
}

// openCalls are the ids of turn turnID's tool calls still open.
func (s *hostSession) openCalls(turnID string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var open []string
	for i := range s.tools {
		e := &s.tools[i]
		if e.TurnID == turnID && !e.Refused && e.Status != event.StatusCompleted && e.Status != event.StatusFailed {
			open = append(open, e.ID)
		}
	}
	return open
}
