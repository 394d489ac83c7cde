package engine

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/tools"
)

// stubTool is an MCP-like tool for the engine's tool assembly.
type stubTool struct{ name, kind string }

func (s stubTool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: s.name, Parameters: json.RawMessage(`{"type":"object"}`)}
}
func (s stubTool) Kind() string { return s.kind }
func (s stubTool) Run(context.Context, json.RawMessage) tools.Result {
	return tools.Result{Content: "ok"}
}

type stubSource struct {
	tools  []tools.Tool
	waited atomic.Int32
}

func (s *stubSource) Wait(context.Context) { s.waited.Add(1) }
func (s *stubSource) Tools() []tools.Tool  { return s.tools }
func (s *stubSource) Status() []event.MCPServerStatus {
	return nil
}

func TestToolsIncludeSources(t *testing.T) {
	cfg := load(t, "")
	global := &stubSource{tools: []tools.Tool{stubTool{"gh__search", tools.KindRead}, stubTool{"gh__delete", tools.KindOther},
		stubTool{"read_file", tools.KindOther}}} // a server cannot replace a built-in
	session := &stubSource{tools: []tools.Tool{stubTool{"gh__search", tools.KindOther}, stubTool{"mine__x", tools.KindOther}}}
	e := &Engine{Config: cfg, MCP: global}

	reg, err := e.Tools(cfg.WorkDir, nil, false, session)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"read_file", "gh__search", "gh__delete", "mine__x"} {
		if _, ok := reg.Get(name); !ok {
			t.Errorf("%s missing", name)
		}
	}
	if rf, _ := reg.Get("read_file"); rf.Kind() != tools.KindRead {
		t.Error("an MCP tool replaced the built-in read_file")
	}
	if s, _ := reg.Get("gh__search"); s.Kind() != tools.KindRead {
		t.Error("a session's server replaced a configured server's tool")
	}
	ro, _ := e.Tools(cfg.WorkDir, nil, true, session)
	if _, ok := ro.Get("gh__search"); !ok {
		t.Error("architect mode dropped a read-only MCP tool")
	}
	if _, ok := ro.Get("gh__delete"); ok {
		t.Error("architect mode kept a tool that changes things")
	}
	e.waitTools(context.Background(), session)
	if global.waited.Load() != 1 || session.waited.Load() != 1 {
		t.Error("a turn must wait for its tool sources")
	}
}
