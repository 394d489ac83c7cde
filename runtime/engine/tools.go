package engine

import (
	"context"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/tools"
)

// readOnlyKinds are the tool kinds architect mode keeps: they look, they do
// not touch.
var readOnlyKinds = map[string]bool{tools.KindRead: true, tools.KindSearch: true, tools.KindThink: true}

// ToolSource offers tools from outside the built-ins: the MCP servers of
// the config (Engine.MCP) or of one session (ToolSources.MCP);
// runtime/mcp's Manager is one.
type ToolSource interface {
	// Wait returns once the source's servers have connected or failed
	// (bounded by their startup timeouts), or when ctx ends.
	Wait(ctx context.Context)
	// Tools returns the tools of the servers connected now.
	Tools() []tools.Tool
	// Status reports each server; a turn announces the failed ones.
	Status() []event.MCPServerStatus
}

// Tools returns the tools a turn offers in workDir: the built-ins (the shell
// only when allowed), reading and writing files through fs (nil: the disk),
// the tools of the configured MCP servers connected now, and with readOnly
// only those that change nothing.
func (e *Engine) Tools(workDir string, fs tools.FS, readOnly bool, extra ...ToolSource) (*tools.Registry, error) {
	reg, err := tools.Builtins(tools.Options{WorkDir: workDir, AllowShell: e.Config.AllowShell, FS: fs})
	if err != nil {
		return nil, err
	}
	for _, src := range append([]ToolSource{e.MCP}, extra...) {
		if src == nil {
			continue
		}
		for _, t := range src.Tools() {
			if _, builtin := reg.Get(t.Spec().Name); !builtin {
				reg.Add(t)
			}
		}
	}
	for _, t := range e.memoryTools() {
		reg.Add(t)
	}
	e.listDelegate(reg)
	if !readOnly {
		return reg, nil
	}
	var keep []tools.Tool
	for _, t := range reg.Tools() {
		if readOnlyKinds[t.Kind()] {
			keep = append(keep, t)
		}
	}
	return tools.NewRegistry(keep...), nil
}

// waitTools waits for the turn's tool sources to be ready.
func (e *Engine) waitTools(ctx context.Context, extra ToolSource) {
	for _, src := range []ToolSource{e.MCP, extra} {
		if src != nil {
			src.Wait(ctx)
		}
	}
}
