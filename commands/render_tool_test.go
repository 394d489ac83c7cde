package commands

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/commands/tui"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/message"
)

func TestDiffSummary(t *testing.T) {
	old := "a\nb\nc\n"
	cases := []struct {
		desc    string
		content []event.ToolContent
		want    string
	}{
		{"Edit main.go", []event.ToolContent{{Diff: &event.Diff{Path: "/w/main.go", OldText: &old, NewText: "a\nB\nc\nd\n"}}}, "+2 −1"},
		{"Write", []event.ToolContent{{Diff: &event.Diff{Path: "/w/new.txt", NewText: "x\ny\n"}}}, "new.txt: new file +2"},
		{"Write new.txt", []event.ToolContent{{Diff: &event.Diff{Path: "/w/new.txt", NewText: "x\ny\n"}}}, "new file +2"},
		{"apply_patch", []event.ToolContent{{Diff: &event.Diff{Path: "/w/a.go", OldText: &old, NewText: "a\n"}}}, "a.go: +0 −2"},
		{"apply_patch", []event.ToolContent{{Diff: &event.Diff{Path: "/w/a", OldText: &old, NewText: ""}},
			{Diff: &event.Diff{Path: "/w/b", NewText: "z"}}}, "2 files +1 −3"},
		{"ls", []event.ToolContent{{TerminalID: "t"}}, ""},
		// A line moved: the counts of the diff a permission question
		// shows (tui.NewFileDiff), not of the lines' multisets (0 and 0).
		{"Edit m.go", []event.ToolContent{{Diff: &event.Diff{Path: "/w/m.go", OldText: &old, NewText: "c\na\nb\n"}}}, "+1 −1"},
	}
	for _, c := range cases {
		if got := diffSummary(c.desc, c.content); got != c.want {
			t.Errorf("%s: %q, want %q", c.desc, got, c.want)
		}
	}
	moved := tui.NewFileDiff(tui.Style{}, "m.go", &old, "c\na\nb\n")
	if moved.Added != 1 || moved.Deleted != 1 {
		t.Errorf("the question's diff counts +%d -%d", moved.Added, moved.Deleted)
	}
}

// TestChatRendersAgentToolCall: an external agent's call whose title and
// arguments come only in an update (Claude) is shown with them, and its
// diff as a short summary on its line.
func TestChatRendersAgentToolCall(t *testing.T) {
	var buf bytes.Buffer
	r := newChatRenderer(&buf, tui.Style{}, false)
	old := "one\n"
	diff := []event.ToolContent{{Diff: &event.Diff{Path: "/w/notes.txt", OldText: &old, NewText: "one\ntwo\n"}}}
	r.Emit(event.Event{Kind: event.ToolCall, Tool: &event.ToolCallInfo{ID: "t", Title: "Edit", Kind: "edit", RawInput: json.RawMessage(`{}`),
		Content: []event.ToolContent{}}})
	r.Emit(event.Event{Kind: event.ToolCallUpdate, Tool: &event.ToolCallInfo{ID: "t", Title: "Edit notes.txt",
		RawInput: json.RawMessage(`{"file_path":"/w/notes.txt"}`), Content: diff}})
	r.Emit(event.Event{Kind: event.ToolCallUpdate, Tool: &event.ToolCallInfo{ID: "t", Status: event.StatusCompleted,
		Title: "Edit notes.txt", Content: diff, Duration: 3 * time.Millisecond}})
	failed := message.Text("exit status 1")
	r.Emit(event.Event{Kind: event.ToolCall, Tool: &event.ToolCallInfo{ID: "c", Title: "false", Kind: "execute"}})
	r.Emit(event.Event{Kind: event.ToolCallUpdate, Tool: &event.ToolCallInfo{ID: "c", Status: event.StatusFailed,
		Content: []event.ToolContent{{Block: &failed}}}})
	r.finish(event.End{StopReason: event.StopEndTurn}, "", "")
	out := ansiStrip(buf.String())
	for _, want := range []string{"✓ Edit notes.txt · +1 −0 · 3ms", "✗ false", "exit status 1"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func ansiStrip(s string) string {
	var b strings.Builder
	esc := false
	for _, r := range s {
		switch {
		case r == 0x1b:
			esc = true
		case esc && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'):
			esc = false
		case esc:
		default:
			b.WriteRune(r)
		}
	}
	return strings.ReplaceAll(b.String(), "\r", "")
}
