package engine

import (
	"context"
	"time"

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

// ListWait bounds how long a listing of the tools or the MCP servers
// (/api/tools, /api/mcp-servers, ACP initialize, `openheim tools`) waits
// for MCP servers still connecting: long enough for a server that is
// starting (npx takes seconds), short of a client's patience.
const ListWait = 15 * time.Second

// WaitMCP waits until the config's MCP servers still connecting have
// connected or failed (each bounded by its startup timeout), ctx ends, or
// max passes, so that a listing made right after start shows their tools
// and their real status, not "not connected" with no error.
func (e *Engine) WaitMCP(ctx context.Context, max time.Duration) {
	if e.MCP == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, max)
	defer cancel()
	e.MCP.Wait(ctx)
}

// waitTools waits for the turn's tool sources to be ready.
func (e *Engine) waitTools(ctx context.Context, extra ToolSource) {
	for _, src := range []ToolSource{e.MCP, extra} {
		if src != nil {
			src.Wait(ctx)
		}
	}
}
