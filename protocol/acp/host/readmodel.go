package host

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/runtime/event"
)

// The read model (seed 002's snapshots): per session, a bounded history of
// what the agent said and did. Thread entries are one per message per
// turn, the user's prompts included; a tool call's entry is every update
// of it merged (the latest title, kind, arguments, content and
// locations); a file's diff is its latest; a permission request is kept
// with its target, options and answer.

// ThreadEntry is one message: the user's prompt, or the agent's answer or
// thinking in a turn (a tool call in between starts a new entry).
type ThreadEntry struct {
	ID        string
	TurnID    string // "" for messages replayed by session/load
	Kind      string // user, agent, thought
	Text      string
	CreatedAt time.Time
	UpdatedAt time.Time
	buf       []byte // the text while it grows, chunk by chunk (Text in snapshots)
}

// ToolCallEntry is what is known of one tool call, every update merged.
// Target is what it acts on (targetOf): a path, a command, a URL or a
// query; Operation says which.
type ToolCallEntry struct {
	ID, Title, Kind, Status string
	Target                  string
	targetType              string // OperationTarget.Type of Target
	RawInput, RawOutput     json.RawMessage
	Content                 []event.ToolContent
	Locations               []event.Location
	TurnID                  string
	// Refused says openheim answered the agent's permission request for
	// this call with a reject option, or cancelled it.
	Refused   bool
	UpdatedAt time.Time
	first     event.ToolCallInfo // what the call's first event said
}

// DiffSnapshot is the latest change a tool call proposed or made to a
// file; OldText nil means a new file.
type DiffSnapshot struct {
	Path       string
	OldText    *string
	NewText    string
	ToolCallID string
	UpdatedAt  time.Time
}

// PermissionEntry is one permission request and its answer. Operation is
// the id of the operation asked about (SessionSnapshot.Operations), ""
// when the call is not in the read model.
type PermissionEntry struct {
	ToolCallID, Title, Kind, Target string
	Operation                       string
	Options                         []acp.PermissionOption
	Outcome, OptionID               string // the answer: selected (OptionID) or cancelled
	At                              time.Time
}

// SessionSnapshot is a session's bounded in-memory history.
type SessionSnapshot struct {
	ID          string
	Thread      []ThreadEntry
	ToolCalls   []ToolCallEntry
	Diffs       []DiffSnapshot
	Permissions []PermissionEntry
	Operations  []Operation // one per tool call kept, in the same order
}

// Snapshot returns session id's read model.
func (h *Host) Snapshot(id string) (SessionSnapshot, bool) {
	s := h.session(id)
	if s == nil {
		return SessionSnapshot{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	thread := make([]ThreadEntry, len(s.thread))
	for i, e := range s.thread {
		e.Text, e.buf = string(e.buf), nil
		thread[i] = e
	}
	ops := make([]Operation, len(s.tools))
	for i := range s.tools {
		ops[i] = s.tools[i].Operation()
	}
	return SessionSnapshot{ID: id, Thread: thread,
		ToolCalls: append([]ToolCallEntry(nil), s.tools...), Diffs: append([]DiffSnapshot(nil), s.diffs...),
		Permissions: append([]PermissionEntry(nil), s.permissions...), Operations: ops}, true
}

var threadKinds = map[event.Kind]string{event.AgentMessageChunk: "agent", event.AgentThoughtChunk: "thought", event.UserMessageChunk: "user"}

// remember keeps an update's event in the read model and returns the event
// to forward: a tool_call for a call already known is forwarded as an
// update, an update of a call never announced as its tool_call, and a
// final update carries what updates changed since the tool_call
// (arguments, title, kind, content, locations; fill). mu is held.
func (s *hostSession) remember(ev event.Event, ok bool) event.Event {
	now := time.Now()
	switch {
	case !ok:
	case threadKinds[ev.Kind] != "":
		s.rememberText(ev, now)
	case ev.Tool != nil:
		s.split = true
		ev = s.rememberTool(ev, now)
	}
	return ev
}

// rememberText adds a chunk to the thread. The user's prompt is recorded
// when it is sent (recordPrompt), so an agent's echo of it is not added.
func (s *hostSession) rememberText(ev event.Event, now time.Time) {
	kind := threadKinds[ev.Kind]
	if kind == "user" && s.echo {
		return
	}
	s.echo = false
	text := ""
	if ev.Content != nil {
		text = ev.Content.Text
		if ev.Content.Thinking != "" {
			text = ev.Content.Thinking
		}
	}
	if n := len(s.thread); n > 0 && s.thread[n-1].Kind == kind && !s.split {
		s.thread[n-1].buf = append(s.thread[n-1].buf, text...)
		s.thread[n-1].UpdatedAt = now
		return
	}
	s.split = false
	s.addThread(ThreadEntry{Kind: kind, Text: text, TurnID: s.turnID(), CreatedAt: now, UpdatedAt: now})
}

func (s *hostSession) addThread(e ThreadEntry) {
	e.buf, e.Text = []byte(e.Text), ""
	s.entries++
	e.ID = fmt.Sprintf("m%d", s.entries)
	s.thread = append(s.thread, e)
	if max := limitOr(s.h.opts.Limits.MaxThreadEntries, DefaultMaxThreadEntries); len(s.thread) > max {
		s.thread = append(s.thread[:0], s.thread[len(s.thread)-max:]...)
	}
}

// recordPrompt adds the user's prompt of turn turnID as its own entry; the
// agent's answer starts the next one. mu is held.
func (s *hostSession) recordPrompt(turnID string, prompt []acp.ContentBlock) {
	var text strings.Builder
	for _, b := range prompt {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "resource_link":
			fmt.Fprintf(&text, "[%s <%s>]", b.Name, b.URI)
		default:
			fmt.Fprintf(&text, "[%s]", b.Type)
		}
	}
	now := time.Now()
	s.addThread(ThreadEntry{Kind: "user", Text: text.String(), TurnID: turnID, CreatedAt: now, UpdatedAt: now})
	s.split, s.echo = true, true
}

func (s *hostSession) turnID() string {
	if s.turn == nil {
		return ""
	}
	return s.turn.id
}

// find returns the entry of tool call id, nil if there is none.
func (s *hostSession) find(id string) *ToolCallEntry {
	for i := len(s.tools) - 1; i >= 0; i-- {
		if s.tools[i].ID == id {
			return &s.tools[i]
		}
	}
	return nil
}

// rememberTool merges a tool call event into the call's entry and returns
// the event to forward (see remember).
func (s *hostSession) rememberTool(ev event.Event, now time.Time) event.Event {
	t := *ev.Tool
	e := s.find(t.ID)
	switch {
	case e == nil:
		ev.Kind = event.ToolCall
		if t.Status == "" {
			t.Status = event.StatusPending
		}
		s.tools = append(s.tools, ToolCallEntry{ID: t.ID, TurnID: s.turnID(), first: t})
		e = &s.tools[len(s.tools)-1]
	case ev.Kind == event.ToolCall:
		ev.Kind = event.ToolCallUpdate
	}
	merge(e, &t, now)
	if t.Status == event.StatusCompleted || t.Status == event.StatusFailed {
		fill(&t, e)
	}
	s.rememberDiffs(t.ID, t.Content, now)
	ev.Tool = &t
	s.trimTools()
	return ev
}

// merge folds an update into the entry: set fields replace, lists too.
func merge(e *ToolCallEntry, t *event.ToolCallInfo, now time.Time) {
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&e.Title, t.Title)
	set(&e.Kind, t.Kind)
	set(&e.Status, t.Status)
	if len(t.RawInput) > 0 {
		e.RawInput = t.RawInput
	}
	if len(t.RawOutput) > 0 {
		e.RawOutput = t.RawOutput
	}
	if t.Content != nil {
		e.Content = t.Content
	}
	if t.Locations != nil {
		e.Locations = t.Locations
	}
	// Only what names a target changes it (most updates are of status).
	if len(t.RawInput) > 0 || t.Content != nil || t.Locations != nil || t.Kind != "" {
		tg := targetOf(e)
		e.Target, e.targetType = tg.Value, tg.Type
	}
	e.UpdatedAt = now
}

// fill gives a final update what later updates said of the call and the
// final one does not repeat: its arguments, title, kind, content and
// locations where they changed since the call's first event (Claude Code
// sends the real input only after its tool_call). What the first event
// said is not repeated: whoever saw the call has it.
func fill(t *event.ToolCallInfo, e *ToolCallEntry) {
	if len(t.RawInput) == 0 && !bytes.Equal(e.RawInput, e.first.RawInput) {
		t.RawInput = e.RawInput
	}
	if t.Title == "" && e.Title != e.first.Title {
		t.Title = e.Title
	}
	if t.Kind == "" && e.Kind != e.first.Kind {
		t.Kind = e.Kind
	}
	if t.Content == nil && !reflect.DeepEqual(e.Content, e.first.Content) {
		t.Content = e.Content
	}
	if t.Locations == nil && !reflect.DeepEqual(e.Locations, e.first.Locations) {
		t.Locations = e.Locations
	}
}

// trimTools keeps the cap: finished calls go first, then the oldest.
func (s *hostSession) trimTools() {
	max := limitOr(s.h.opts.Limits.MaxToolCallEntries, DefaultMaxToolCallEntries)
	for len(s.tools) > max {
		drop := 0
		for i, e := range s.tools {
			if e.Status == event.StatusCompleted || e.Status == event.StatusFailed {
				drop = i
				break
			}
		}
		s.tools = append(s.tools[:drop], s.tools[drop+1:]...)
	}
}

// rememberDiffs keeps each file's latest diff, as many files as tool
// calls are kept.
func (s *hostSession) rememberDiffs(callID string, content []event.ToolContent, now time.Time) {
	for _, c := range content {
		if c.Diff == nil {
			continue
		}
		d := DiffSnapshot{Path: c.Diff.Path, OldText: c.Diff.OldText, NewText: c.Diff.NewText, ToolCallID: callID, UpdatedAt: now}
		kept := s.diffs[:0]
		for _, old := range s.diffs {
			if old.Path != d.Path {
				kept = append(kept, old)
			}
		}
		s.diffs = append(kept, d)
		if max := limitOr(s.h.opts.Limits.MaxToolCallEntries, DefaultMaxToolCallEntries); len(s.diffs) > max {
			s.diffs = append(s.diffs[:0], s.diffs[len(s.diffs)-max:]...)
		}
	}
}
