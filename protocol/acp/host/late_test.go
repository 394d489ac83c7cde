//go:build unix

package host

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/protocol/acp/host/acptest"
	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/event"
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
	if _, results := storedCalls(t, r.Engine.Store, meta.ID); results["late"].Type == "" || results["late"].IsError || !strings.Contains(results["late"].Content, "hi") {
		t.Fatalf("stored result of the late call: %+v", results["late"])
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
	if _, results := storedCalls(t, r.Engine.Store, meta.ID); !results["open"].IsError || !strings.Contains(results["open"].Content, "the turn ended first") {
		t.Fatalf("stored result of the open call: %+v", results["open"])
	}
}
