//go:build unix

package host

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openheim/openheim/protocol/acp/host/acptest"
	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/permission"
	"github.com/openheim/openheim/runtime/session"
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
	started := time.Now()
	meta, evs := promptDenying(t, r)
	if last := lastUpdate(evs, "late"); last == nil || last.Status != event.StatusCompleted {
		t.Fatalf("the call's end sent after the answer is not in the turn: %+v", last)
	}
	if took := time.Since(started); took > 5*time.Second {
		t.Errorf("the turn took %v", took)
	}
	if result := storedResult(t, r, meta.ID, "late"); result == nil || result.IsError || !strings.Contains(result.Content, "hi") {
		t.Fatalf("stored result of the late call: %+v", result)
	}
}

// TestCallNeverEndedIsCut: a call the agent never ends, before or after
// its answer, is stored as one the turn ended first once the grace is
// over: the turn does not wait longer.
func TestCallNeverEndedIsCut(t *testing.T) {
	call := json.RawMessage(`{"sessionUpdate":"tool_call","toolCallId":"open","title":"sleep","kind":"execute","status":"in_progress"}`)
	r, _ := fakeRunner(t, acptest.Script{Updates: []json.RawMessage{call, acptest.TextChunk("done")}},
		&config.Config{WorkDir: t.TempDir()}, false)
	started := time.Now()
	meta, _ := promptDenying(t, r)
	if took := time.Since(started); took < lateCallGrace || took > lateCallGrace+5*time.Second {
		t.Errorf("the turn took %v; the grace is %v", took, lateCallGrace)
	}
	if res := storedResult(t, r, meta.ID, "open"); res == nil || !res.IsError || !strings.Contains(res.Content, "the turn ended first") {
		t.Fatalf("stored result of the open call: %+v", res)
	}
}

// storedResult is the stored tool result of call id in session sid.
func storedResult(t *testing.T, r *Runner, sid, id string) *message.Block {
	t.Helper()
	conv, err := r.Engine.Store.Load(sid)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range conv.Messages {
		for i, b := range m.Content {
			if b.Type == message.TypeToolResult && b.ToolCallID == id {
				return &m.Content[i]
			}
		}
	}
	return nil
}

// promptDenying runs a turn "go" on r, every permission denied, and
// returns its session and its events.
func promptDenying(t *testing.T, r *Runner) (session.Meta, []event.Event) {
	t.Helper()
	var mu sync.Mutex
	var evs []event.Event
	meta, end, err := r.Prompt(context.Background(), engine.Request{Input: []message.Block{message.Text("go")},
		Gate: engine.Asking(permission.DenyAsker), Sink: event.SinkFunc(func(ev event.Event) { mu.Lock(); evs = append(evs, ev); mu.Unlock() })})
	if err != nil || end.Err != nil {
		t.Fatalf("prompt: %v %v", err, end.Err)
	}
	mu.Lock()
	defer mu.Unlock()
	return meta, evs
}
