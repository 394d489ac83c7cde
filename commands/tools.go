package commands

import (
	"context"
	"fmt"
	"strings"

	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/mcp"
	"github.com/urfave/cli/v3"
)

// ToolsOptions is everything `openheim tools` needs.
type ToolsOptions struct {
	IO     *IOStreams
	Config func() (*config.Config, error)
	// MCP connects the config's MCP servers and waits for them.
	MCP        func(ctx context.Context, cfg *config.Config, only string) (*mcp.Manager, error)
	AllowShell bool
	NoMCP      bool // list without connecting the MCP servers
	Output     jsonOutput
}

func newCmdTools(f *Factory, runF func(context.Context, *ToolsOptions) error) *cli.Command {
	opts := &ToolsOptions{IO: f.IOStreams, Config: f.Config, MCP: f.MCP}
	return &cli.Command{
		Name:  "tools",
		Usage: "list the tools the agent can call",
		Description: `Lists the tools a turn offers, with their kind and a one-line description:
the built-in tools (execute_command only when allow_shell is on, or with
--allow-shell), the long-term memory tools, delegate_task and the tools of the
configured MCP servers ("server__tool"; it connects to them, each within its
startup timeout, and warns about the ones that fail; --no-mcp lists without
them, at once). --json prints seed 000's Tool objects
({"type":"function","function":{...}}), one per line, sorted by name.

Examples:
  openheim tools
  openheim tools --allow-shell
  openheim tools --no-mcp
  openheim tools --json | jq -r .function.name
  openheim tools --select function.name`,
		Flags: append(jsonFlags(),
			&cli.BoolFlag{Name: "allow-shell", Usage: "include execute_command"},
			&cli.BoolFlag{Name: "no-mcp", Usage: "do not connect the MCP servers: list the other tools only"},
		),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if err := noArgs(cmd); err != nil {
				return err
			}
			opts.AllowShell, opts.NoMCP, opts.Output = cmd.Bool("allow-shell"), cmd.Bool("no-mcp"), jsonOutputOf(cmd)
			return run(ctx, opts, runF, toolsRun)
		},
	}
}

func toolsRun(ctx context.Context, opts *ToolsOptions) error {
	cfg, err := opts.Config()
	if err != nil {
		return err
	}
	cfg.AllowShell = cfg.AllowShell || opts.AllowShell
	// Memory is opened only when a memory tool runs: listing is free.
	eng := &engine.Engine{Config: cfg, Memory: &engine.MemoryOpener{}}
	if !opts.NoMCP && len(cfg.MCPServers) > 0 && opts.MCP != nil {
		m, err := opts.MCP(ctx, cfg, "")
		if err != nil {
			return err
		}
		defer m.Close()
		for _, s := range m.Status() {
			if s.Error != nil {
				fmt.Fprintf(opts.IO.ErrOut, "openheim: warning: MCP server %s: %s (its tools are left out)\n", s.Name, *s.Error)
			}
		}
		eng.MCP = m
	}
	reg, err := eng.Tools(cfg.WorkDir, nil, false)
	if err != nil {
		return failure(err)
	}
	return printTools(opts.IO, opts.Output, reg.Tools())
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}
