//go:build unix

package host

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/protocol/acp/host/acptest"
	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/permission"
)

// TestLateCallEndIsKept: an agent that answers session/prompt with a tool
// call still in progress and sends the call's end just after (codex-acp
// does so at times, under load) has that end in the turn: the call's last
// update and its stored result are the agent's, not a call cut short.
func TestLateCallEndIsKept(t *testing.T) {
	call := json.RawMessage(`{"sessionUpdate":"tool_call","toolCallId":"late","title":"echo hi","kind":"execute","status":"pending"}`)
	running := json.RawMessage(`{"sessionUpdate":"tool_call_update","toolCallId":"late","status":"in_progress"}`)
	end := json.RawMessage(`{"sessionUpdate":"tool_call_update","toolCallId":"late","status":"completed","rawOutput":"hi"}`)
	r, _ := fakeRunner(t, acptest.Script{Updates: []json.RawMessage{call, running, acptest.TextChunk("done")},
		LateUpdates: []json.RawMessage{end}, LateDelay: 50 * time.Millisecond}, &config.Config{WorkDir: t.TempDir()}, false)
	var evs []event.Event
	started := time.Now()
	meta, turnEnd, err := r.Prompt(context.Background(), engine.Request{Input: []message.Block{message.Text("go")},
		Gate: engine.Asking(permission.DenyAsker), Sink: event.SinkFunc(func(ev event.Event) { evs = append(evs, ev) })})
	if err != nil || turnEnd.Err != nil {
		t.Fatalf("prompt: %v %v", err, turnEnd.Err)
	}
	if last := lastUpdate(evs, "late"); last == nil || last.Status != event.StatusCompleted {
		t.Fatalf("the call's end sent after the answer is not in the turn: %+v", last)
	}
	if took := time.Since(started); took > 5*time.Second {
		t.Errorf("the turn took %v", took)
	}
	conv, err := r.Engine.Store.Load(meta.ID)
	if err != nil {
		t.Fatal(err)
	}
	var result *message.Block
	for _, m := range conv.Messages {
		for i, b := range m.Content {
			if b.Type == message.TypeToolResult && b.ToolCallID == "late" {
				result = &m.Content[i]
			}
		}
	}
	if result == nil || result.IsError || !strings.Contains(result.Content, "hi") {
		t.Fatalf("stored result of the late call: %+v", result)
	}
}
