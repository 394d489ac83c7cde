package commands

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/event"
)

func turn(r *textRenderer) {
	r.Emit(event.Text("s", event.AgentThoughtChunk, "thinking"))
	r.Emit(event.Text("s", event.AgentMessageChunk, "Looking."))
	r.Emit(event.Event{Kind: event.ToolCall, Tool: &event.ToolCallInfo{ID: "c", Title: "list_dir", RawInput: json.RawMessage(`{"path":"."}`)}})
	r.Emit(event.Event{Kind: event.ToolCallUpdate, Tool: &event.ToolCallInfo{ID: "c", Status: event.StatusInProgress}})
	r.Emit(event.Event{Kind: event.ToolCallUpdate, Tool: &event.ToolCallInfo{ID: "c", Status: event.StatusFailed, Duration: 12 * time.Millisecond}})
	r.Emit(event.Text("s", event.AgentMessageChunk, "Done"))
	r.finish()
}

func TestRendererPipe(t *testing.T) {
	var out, errOut bytes.Buffer
	turn(newTextRenderer(&IOStreams{Out: &out, ErrOut: &errOut}))
	if out.String() != "Looking.\n\nDone\n" {
		t.Errorf("stdout = %q", out.String())
	}
	if errOut.Len() != 0 {
		t.Errorf("stderr must stay quiet off a terminal: %q", errOut.String())
	}
}

func TestRendererTerminalShowsActivity(t *testing.T) {
	var out, errOut bytes.Buffer
	turn(newTextRenderer(&IOStreams{Out: &out, ErrOut: &errOut, ErrTTY: true}))
	if out.String() != "Looking.\n\nDone\n" {
		t.Errorf("stdout = %q", out.String())
	}
	for _, want := range []string{"thinking", `✗ list_dir {"path":"."} (12ms)`} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("stderr %q lacks %q", errOut.String(), want)
		}
	}
}
