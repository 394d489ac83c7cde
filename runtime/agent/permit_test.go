package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/openheim/openheim/runtime/confine"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/permission"
	"github.com/openheim/openheim/runtime/tools"
)

func TestPermitRefusesCall(t *testing.T) {
	var ran atomic.Int32
	write := &fakeTool{name: "write", run: func(context.Context, json.RawMessage) tools.Result {
		ran.Add(1)
		return tools.Result{Content: "written"}
	}}
	read := &fakeTool{name: "read", run: func(context.Context, json.RawMessage) tools.Result { return tools.Result{Content: "data"} }}
	var mu sync.Mutex
	var asked []string
	a := &Agent{Tools: tools.NewRegistry(write, read), Permit: func(_ context.Context, c message.Block, kind string) bool {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, c.Name+" "+kind+" "+c.Arguments)
		return c.Name != "write"
	}}
	p := &scripted{replies: []func(context.Context, func(llm.Delta) error) (*llm.Response, error){
		calls(use("a", "write", `{"path":"x"}`), use("b", "read", ``)), text("ok")}}
	a.Provider = p
	end, rec, saved := runTurn(t, a, context.Background())
	if end.StopReason != event.StopEndTurn || end.Err != nil {
		t.Fatalf("end = %+v", end)
	}
	if ran.Load() != 0 {
		t.Error("a refused call ran its tool")
	}
	res := saved[2].Content
	if res[0].Content != permission.DeniedResult || !res[0].IsError {
		t.Errorf("refused result = %+v", res[0])
	}
	if res[1].Content != "data" || res[1].IsError {
		t.Errorf("permitted result = %+v", res[1])
	}
	// The model sees the denial as the call's result.
	sent := p.requests[1].Messages[2].Content[0]
	if sent.ToolCallID != "a" || sent.Content != permission.DeniedResult || !sent.IsError {
		t.Errorf("model was sent %+v", sent)
	}
	// Permit sees the kind and the arguments ("{}" when none were given).
	mu.Lock()
	got := map[string]bool{}
	for _, s := range asked {
		got[s] = true
	}
	mu.Unlock()
	if len(asked) != 2 || !got[`write read {"path":"x"}`] || !got["read read {}"] {
		t.Errorf("Permit asked %q", asked)
	}
	var failed []string
	for _, e := range rec.events {
		if e.Kind == event.ToolCallUpdate && e.Tool.Status == event.StatusFailed {
			failed = append(failed, e.Tool.ID+" "+string(e.Tool.RawOutput))
		}
	}
	if len(failed) != 1 || failed[0] != `a "Permission denied by user."` {
		t.Errorf("failed updates = %q", failed)
	}
}

func TestPermitNotAskedForUnknownToolOrBadArguments(t *testing.T) {
	echo := &fakeTool{name: "echo", run: func(context.Context, json.RawMessage) tools.Result { return tools.Result{Content: "ok"} }}
	var asked atomic.Int32
	a := &Agent{Tools: tools.NewRegistry(echo), Permit: func(context.Context, message.Block, string) bool {
		asked.Add(1)
		return false
	}}
	a.Provider = &scripted{replies: []func(context.Context, func(llm.Delta) error) (*llm.Response, error){
		calls(use("a", "nope", `{}`), use("b", "echo", `not json`)), text("ok")}}
	_, _, saved := runTurn(t, a, context.Background())
	if asked.Load() != 0 {
		t.Errorf("Permit asked %d times about calls that fail anyway", asked.Load())
	}
	for _, r := range saved[2].Content {
		if r.Content == permission.DeniedResult {
			t.Errorf("call %s reported as denied: %q", r.ToolCallID, r.Content)
		}
	}
}

// An edit shows its diff before it runs: on the tool_call event, in the
// permission question (through ctx, as the gate reads it), and on the
// final update once it ran.
func TestEditCallsCarryTheirDiff(t *testing.T) {
	root, err := confine.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	abs := filepath.Join(root.Path(), "notes.txt")
	os.WriteFile(abs, []byte("alpha\nbeta\n"), 0o644)
	var asked permission.Request
	gate := permission.NewGate(permission.Rules{}, permission.AskerFunc(func(_ context.Context, r permission.Request) (permission.Outcome, error) {
		asked = r
		return permission.AllowOnce, nil
	}))
	a := &Agent{Tools: tools.NewRegistry(&tools.EditFile{Root: root}, &tools.WriteFile{Root: root}),
		Permit: func(ctx context.Context, c message.Block, kind string) bool {
			ok, _ := gate.Check(ctx, permission.Request{ToolCallID: c.ID, Tool: c.Name, Kind: kind, Args: json.RawMessage(c.Arguments)})
			return ok
		}}
	a.Provider = &scripted{replies: []func(context.Context, func(llm.Delta) error) (*llm.Response, error){
		calls(use("e", "edit_file", `{"path":"notes.txt","old_string":"beta","new_string":"gamma"}`)), text("done")}}
	_, rec, _ := runTurn(t, a, context.Background())

	var call, final *event.ToolCallInfo
	for _, e := range rec.events {
		switch {
		case e.Kind == event.ToolCall:
			call = e.Tool
		case e.Kind == event.ToolCallUpdate && e.Tool.Status == event.StatusCompleted:
			final = e.Tool
		}
	}
	for name, info := range map[string]*event.ToolCallInfo{"tool_call": call, "final update": final} {
		if info == nil || len(info.Content) != 1 || info.Content[0].Diff == nil {
			t.Fatalf("%s carries no diff: %+v", name, info)
		}
		d := info.Content[0].Diff
		if d.Path != abs || *d.OldText != "alpha\nbeta\n" || d.NewText != "alpha\ngamma\n" {
			t.Errorf("%s diff = %+v", name, d)
		}
		if len(info.Locations) != 1 || info.Locations[0].Path != abs || *info.Locations[0].Line != 2 {
			t.Errorf("%s locations = %+v", name, info.Locations)
		}
	}
	if len(asked.Content) != 1 || asked.Content[0].Diff == nil || asked.Content[0].Diff.NewText != "alpha\ngamma\n" {
		t.Errorf("the permission question carries %+v", asked.Content)
	}
}
