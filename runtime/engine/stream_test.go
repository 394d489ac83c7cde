package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm/llmtest"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/tools"
)

// failingSource is an MCP source one of whose servers could not connect.
type failingSource struct {
	stubSource
	status []event.MCPServerStatus
}

func (f *failingSource) Status() []event.MCPServerStatus { return f.status }

// TestPromptOpensStream: a turn's stream opens with the session as the
// turn records it (title, model, provider, cwd, updated_at), then one
// event per MCP server that could not be connected, configured or the
// session's own, before anything the loop emits; nothing goes around the
// stream.
func TestPromptOpensStream(t *testing.T) {
	e, _, _ := fakeEngine(t, llmtest.Reply{Text: []string{"answer"}})
	why, why2 := "exit status 1", "refused"
	e.MCP = &failingSource{status: []event.MCPServerStatus{{Name: "ok", Connected: true}, {Name: "broken", Error: &why}}}
	own := &failingSource{status: []event.MCPServerStatus{{Name: "mine", Error: &why2}}}
	var evs []event.Event
	meta, end, err := e.Prompt(context.Background(), Request{Input: []message.Block{message.Text("Name the session")},
		Tools: ToolSources{MCP: own}, Sink: event.SinkFunc(func(ev event.Event) { evs = append(evs, ev) })})
	if err != nil || end.Err != nil {
		t.Fatalf("%v %v", err, end.Err)
	}
	if len(evs) < 4 {
		t.Fatalf("events: %+v", evs)
	}
	info := evs[0].Info
	if evs[0].Kind != event.SessionInfoUpdate || evs[0].SessionID != meta.ID || info == nil {
		t.Fatalf("first event: %+v", evs[0])
	}
	if info.Title != "Name the session" || info.Model != "m" || info.Provider != "local" || info.Cwd != e.Config.WorkDir || info.UpdatedAt.IsZero() {
		t.Errorf("session info: %+v", info)
	}
	for i, name := range []string{"broken", "mine"} {
		ev := evs[1+i]
		if ev.Kind != event.MCPServerFailed || ev.SessionID != meta.ID || ev.Server == nil || ev.Server.Name != name || ev.Server.Error == nil {
			t.Errorf("event %d: %+v, want %s's failure", 1+i, ev, name)
		}
	}
	if evs[3].Kind != event.Committed {
		t.Errorf("event 3: %s, want the loop's first (the input committed)", evs[3].Kind)
	}
	for _, ev := range evs[1:] {
		if ev.Kind == event.SessionInfoUpdate {
			t.Errorf("a second session info: %+v", ev)
		}
	}
}

// TestPromptSetupErrorEmitsNothing: a turn that cannot start (here a
// malformed subagent profile) fails before its stream opens, so a
// transport never shows a header without a result.
func TestPromptSetupErrorEmitsNothing(t *testing.T) {
	e, _, _ := fakeEngine(t)
	if err := os.MkdirAll(e.Config.AgentsDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(e.Config.AgentsDir(), "not a name.md"), []byte("You review.\n"), 0o600)
	var evs []event.Event
	_, _, err := e.Prompt(context.Background(), Request{Input: []message.Block{message.Text("hi")},
		Sink: event.SinkFunc(func(ev event.Event) { evs = append(evs, ev) })})
	if err == nil || len(evs) != 0 {
		t.Fatalf("err %v, events %+v", err, evs)
	}
}

// TestToolFilterAndExtra: Only narrows the offered tools, ReadOnly drops
// those that change things, and Extra tools are offered whatever the
// filter and pass no gate.
func TestToolFilterAndExtra(t *testing.T) {
	e, srv, _ := fakeEngine(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "client_x", Arguments: `{}`}}},
		llmtest.Reply{Text: []string{"done"}})
	ran := false
	extra := &runTool{stubTool: stubTool{"client_x", tools.KindOther}, ran: &ran}
	_, end, err := e.Prompt(context.Background(), Request{Input: []message.Block{message.Text("go")},
		Filter: ToolFilter{ReadOnly: true, Only: []string{"read_file", "write_file"}},
		Tools:  ToolSources{Extra: []tools.Tool{extra}},
		Gate:   Delegated(func(context.Context, message.Block, string) bool { return false })})
	if err != nil || end.Err != nil {
		t.Fatalf("%v %v", err, end.Err)
	}
	if !ran {
		t.Error("the Extra tool did not run: a gate refused it")
	}
	var body struct {
		Tools []struct{ Function struct{ Name string } }
	}
	if err := json.Unmarshal(srv.Requests()[0].Raw, &body); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range body.Tools {
		names = append(names, tl.Function.Name)
	}
	if len(names) != 2 || names[0] != "client_x" && names[1] != "client_x" || names[0] != "read_file" && names[1] != "read_file" {
		t.Errorf("tools offered: %v, want read_file (write_file is not read-only) and client_x", names)
	}
}

// runTool is a stub tool that notes it ran.
type runTool struct {
	stubTool
	ran *bool
}

func (r *runTool) Run(context.Context, json.RawMessage) tools.Result {
	*r.ran = true
	return tools.Result{Content: "ok"}
}
