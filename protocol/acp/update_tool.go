package acp

import (
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/message"
)

// The tool-call half of the mapping between events and session/update:
// title, kind, status, arguments, output, content (blocks, diffs,
// terminals) and locations, both ways, so that a tool call an external
// agent reports reaches NDJSON, ACP out and the store without loss.

// toolUpdate is the tool_call or tool_call_update of t. A tool_call always
// has its title (ACP requires one); an update only what it changes.
func toolUpdate(kind event.Kind, t *event.ToolCallInfo) SessionUpdate {
	u := SessionUpdate{SessionUpdate: string(kind), ToolCallID: t.ID, Kind: t.Kind, Status: t.Status,
		RawInput: t.RawInput, RawOutput: t.RawOutput,
		ToolContent: toolContentFrom(t.Content), Locations: locationsFrom(t.Locations)}
	if kind == event.ToolCall || t.Title != "" {
		title := t.Title
		u.Title = &title
	}
	return u
}

// toolInfo is the event of a tool_call or tool_call_update; a tool_call
// without a status is pending.
func toolInfo(kind event.Kind, u SessionUpdate) *event.ToolCallInfo {
	t := &event.ToolCallInfo{ID: u.ToolCallID, Kind: u.Kind, Status: u.Status, RawInput: u.RawInput, RawOutput: u.RawOutput,
		Content: ToolContentEvents(u.ToolContent), Locations: LocationEvents(u.Locations)}
	if u.Title != nil {
		t.Title = *u.Title
	}
	if kind == event.ToolCall && t.Status == "" {
		t.Status = event.StatusPending
	}
	return t
}

// toolContentFrom is an event's tool content on the wire; nil stays nil.
func toolContentFrom(items []event.ToolContent) []ToolCallContent {
	if items == nil {
		return nil
	}
	out := make([]ToolCallContent, 0, len(items))
	for _, it := range items {
		switch {
		case it.Diff != nil:
			out = append(out, ToolCallContent{Type: ToolContentDiff, Path: it.Diff.Path, OldText: it.Diff.OldText, NewText: it.Diff.NewText})
		case it.TerminalID != "":
			out = append(out, ToolCallContent{Type: ToolContentTerminal, TerminalID: it.TerminalID})
		case it.Block != nil:
			out = append(out, ToolCallContent{Type: ToolContentBlock, Content: contentFrom(it.Block)})
		}
	}
	return out
}

// ToolContentEvents is wire tool content as the event stream's; nil stays
// nil, an empty list stays empty (an update that clears the content).
func ToolContentEvents(items []ToolCallContent) []event.ToolContent {
	if items == nil {
		return nil
	}
	out := make([]event.ToolContent, 0, len(items))
	for _, it := range items {
		switch it.Type {
		case ToolContentDiff:
			out = append(out, event.ToolContent{Diff: &event.Diff{Path: it.Path, OldText: it.OldText, NewText: it.NewText}})
		case ToolContentTerminal:
			out = append(out, event.ToolContent{TerminalID: it.TerminalID})
		case ToolContentBlock:
			if it.Content != nil {
				b := blockFrom(*it.Content)
				out = append(out, event.ToolContent{Block: &b})
			}
		}
	}
	return out
}

func locationsFrom(locs []event.Location) []ToolCallLocation {
	if locs == nil {
		return nil
	}
	out := make([]ToolCallLocation, len(locs))
	for i, l := range locs {
		out[i] = ToolCallLocation{Path: l.Path, Line: l.Line}
	}
	return out
}

// LocationEvents is wire locations as the event stream's; nil stays nil.
func LocationEvents(locs []ToolCallLocation) []event.Location {
	if locs == nil {
		return nil
	}
	out := make([]event.Location, len(locs))
	for i, l := range locs {
		out[i] = event.Location{Path: l.Path, Line: l.Line}
	}
	return out
}

// ContentText is the text a tool call's content shows: its text blocks,
// one per line (what a result is when the agent sent no rawOutput).
func ContentText(items []event.ToolContent) string {
	var s string
	for _, it := range items {
		if it.Block != nil && it.Block.Type == message.TypeText && it.Block.Text != "" {
			if s != "" {
				s += "\n"
			}
			s += it.Block.Text
		}
	}
	return s
}
