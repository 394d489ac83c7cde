package host

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/protocol/acp/host/acptest"
	"github.com/openheim/openheim/runtime/event"
)

// operationUpdates are a read and an edit as Claude Code sends them, an
// execute as Codex does (asked about first: askExecute), a fetch left
// running, a search that fails and a call with no kind. %W is the work
// directory.
var operationUpdates = []string{
	`{"_meta":{"claudeCode":{"toolName":"Read"}},"toolCallId":"toolu_r","sessionUpdate":"tool_call","rawInput":{"file_path":"%W/a.go"},"status":"pending","title":"Read a.go","kind":"read","content":[],"locations":[{"path":"%W/a.go","line":1}]}`,
	`{"toolCallId":"toolu_r","sessionUpdate":"tool_call_update","status":"completed","content":[{"type":"content","content":{"type":"text","text":"package a"}}]}`,
	`{"toolCallId":"toolu_w","sessionUpdate":"tool_call","rawInput":{},"status":"pending","title":"Write","kind":"edit","content":[],"locations":[]}`,
	`{"toolCallId":"toolu_w","sessionUpdate":"tool_call_update","rawInput":{"file_path":"%W/b.txt","content":"new"},"title":"Write b.txt","content":[{"type":"diff","path":"%W/b.txt","oldText":null,"newText":"new"}],"locations":[{"path":"%W/b.txt"}]}`,
	`{"toolCallId":"toolu_w","sessionUpdate":"tool_call_update","status":"completed"}`,
	`{"sessionUpdate":"tool_call","toolCallId":"call_x","title":"go test ./...","kind":"execute","status":"in_progress","rawInput":{"command":["/bin/bash","-lc","go test ./..."],"cwd":"%W"},"locations":[{"path":"%W"}]}`,
	`{"sessionUpdate":"tool_call_update","toolCallId":"call_x","status":"completed","rawOutput":{"exit_code":0}}`,
	`{"sessionUpdate":"tool_call","toolCallId":"toolu_f","title":"Fetch","kind":"fetch","status":"in_progress","rawInput":{"url":"https://example.com/doc","prompt":"sum up"}}`,
	`{"sessionUpdate":"tool_call","toolCallId":"toolu_s","title":"grep","kind":"search","status":"in_progress","rawInput":{"pattern":"TODO","path":"%W"}}`,
	`{"sessionUpdate":"tool_call_update","toolCallId":"toolu_s","status":"failed"}`,
	`{"sessionUpdate":"tool_call","toolCallId":"x_1","title":"something","status":"pending"}`,
}

const askExecute = `{"toolCall":{"toolCallId":"call_x","title":"go test ./...","kind":"execute","status":"pending",` +
	`"rawInput":{"command":["/bin/bash","-lc","go test ./..."]}},` +
	`"options":[{"optionId":"allow-once","name":"Allow","kind":"allow_once"},{"optionId":"reject-once","name":"Reject","kind":"reject_once"}]}`

// TestOperations: the scripted fake agent's read, edit and execute calls
// (and a fetch, a search and a call of no kind) are operations in the
// read model, each of the kind, phase, title and target its updates
// merged say, in the order of the calls; the permission request names
// the operation it asked about.
func TestOperations(t *testing.T) {
	work, _ := filepath.EvalSymlinks(t.TempDir())
	fill := func(s string) json.RawMessage { return json.RawMessage(strings.ReplaceAll(s, "%W", work)) }
	var ups []json.RawMessage
	for _, u := range operationUpdates {
		ups = append(ups, fill(u))
	}
	ask := fill(askExecute)
	allow := func(context.Context, acp.RequestPermissionRequest) acp.RequestPermissionResponse {
		return acp.RequestPermissionResponse{Outcome: acp.PermissionOutcome{Outcome: acp.OutcomeSelected, OptionID: "allow-once"}}
	}
	h, _ := inProcess(t, acptest.Script{Updates: ups, AskPermission: &ask}, Options{WorkDir: work, Permission: allow})
	id, _ := h.NewSession(context.Background(), SessionOptions{})
	turn, err := h.Prompt(context.Background(), id, []acp.ContentBlock{{Type: "text", Text: "go"}})
	if err != nil {
		t.Fatal(err)
	}
	collect(t, turn)
	snap, _ := h.Snapshot(id)
	want := []Operation{
		{ID: "call_x", Kind: "execute", Phase: PhaseCompleted, Title: "go test ./...", Target: OperationTarget{TargetCommand, "/bin/bash -lc go test ./..."}},
		{ID: "toolu_r", Kind: "read", Phase: PhaseCompleted, Title: "Read a.go", Target: OperationTarget{TargetFile, work + "/a.go"}},
		{ID: "toolu_w", Kind: "edit", Phase: PhaseCompleted, Title: "Write b.txt", Target: OperationTarget{TargetFile, work + "/b.txt"}},
		{ID: "toolu_f", Kind: "fetch", Phase: PhaseRunning, Title: "Fetch", Target: OperationTarget{TargetURL, "https://example.com/doc"}},
		{ID: "toolu_s", Kind: "search", Phase: PhaseFailed, Title: "grep", Target: OperationTarget{TargetQuery, "TODO"}},
		{ID: "x_1", Kind: "other", Phase: PhasePending, Title: "something"},
	}
	if len(snap.Operations) != len(want) {
		t.Fatalf("operations: %+v", snap.Operations)
	}
	for i, op := range snap.Operations {
		if op.TurnID == "" || op.UpdatedAt.IsZero() {
			t.Errorf("operation %s has no turn or time: %+v", op.ID, op)
		}
		op.TurnID, op.UpdatedAt = "", want[i].UpdatedAt
		if op != want[i] {
			t.Errorf("operation %d:\n got %+v\nwant %+v", i, op, want[i])
		}
	}
	if len(snap.Permissions) != 1 || snap.Permissions[0].Operation != "call_x" || snap.Permissions[0].Target != "/bin/bash -lc go test ./..." {
		t.Errorf("permission: %+v", snap.Permissions)
	}
}

// TestOperationPhase: how a call's status and openheim's refusal make the
// operation's phase; a refused call fails before the agent ends it.
func TestOperationPhase(t *testing.T) {
	for _, c := range []struct {
		status  string
		refused bool
		want    string
	}{
		{"", false, PhasePending}, {event.StatusPending, false, PhasePending}, {event.StatusInProgress, false, PhaseRunning},
		{event.StatusCompleted, false, PhaseCompleted}, {event.StatusFailed, false, PhaseFailed},
		{event.StatusPending, true, PhaseFailed}, {event.StatusCompleted, true, PhaseCompleted},
	} {
		e := ToolCallEntry{ID: "c", Status: c.status, Refused: c.refused}
		if got := e.Operation().Phase; got != c.want {
			t.Errorf("status %q refused %v: phase %q, want %q", c.status, c.refused, got, c.want)
		}
	}
}

// TestTargetOf: what names a call's target, by kind.
func TestTargetOf(t *testing.T) {
	for _, c := range []struct {
		kind, input string
		locations   []event.Location
		want        OperationTarget
	}{
		{"execute", `{"command":"make test"}`, []event.Location{{Path: "/w"}}, OperationTarget{TargetCommand, "make test"}},
		{"read", `{"file_path":"/w/a"}`, nil, OperationTarget{TargetFile, "/w/a"}},
		{"read", `{"file_path":"/w/a"}`, []event.Location{{Path: "/w/b"}}, OperationTarget{TargetFile, "/w/b"}},
		{"fetch", `{"url":"https://x.test/"}`, nil, OperationTarget{TargetURL, "https://x.test/"}},
		{"search", `{"query":"how"}`, nil, OperationTarget{TargetQuery, "how"}},
		{"other", `{"cmd":["ls","-l"]}`, nil, OperationTarget{TargetCommand, "ls -l"}},
		{"other", `"not an object"`, nil, OperationTarget{}},
		{"think", ``, nil, OperationTarget{}},
	} {
		e := ToolCallEntry{Kind: c.kind, RawInput: json.RawMessage(c.input), Locations: c.locations}
		if got := targetOf(&e); got != c.want {
			t.Errorf("%s %s: %+v, want %+v", c.kind, c.input, got, c.want)
		}
	}
}
