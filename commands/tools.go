package commands

import (
	"context"
	"strings"

	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/engine"
	"github.com/urfave/cli/v3"
)

// ToolsOptions is everything `openheim tools` needs.
type ToolsOptions struct {
	IO         *IOStreams
	Config     func() (*config.Config, error)
	AllowShell bool
	Output     jsonOutput
}

func newCmdTools(f *Factory, runF func(context.Context, *ToolsOptions) error) *cli.Command {
	opts := &ToolsOptions{IO: f.IOStreams, Config: f.Config}
	return &cli.Command{
		Name:  "tools",
		Usage: "list the tools the agent can call",
		Description: `Lists the tools a turn offers, with their kind and a one-line description:
the built-in tools (execute_command only when allow_shell is on, or with
--allow-shell), the long-term memory tools and delegate_task. The tools of MCP
servers are listed by 'openheim mcp tools' (it connects to them).
--json prints seed 000's Tool objects ({"type":"function","function":{...}}),
one per line, sorted by name.

Examples:
  openheim tools
  openheim tools --allow-shell
  openheim tools --json | jq -r .function.name
  openheim tools --select function.name`,
		Flags: append(jsonFlags(),
			&cli.BoolFlag{Name: "allow-shell", Usage: "include execute_command"},
		),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if err := noArgs(cmd); err != nil {
				return err
			}
			opts.AllowShell, opts.Output = cmd.Bool("allow-shell"), jsonOutputOf(cmd)
			return run(ctx, opts, runF, toolsRun)
		},
	}
}

func toolsRun(_ context.Context, opts *ToolsOptions) error {
	cfg, err := opts.Config()
	if err != nil {
		return err
	}
	cfg.AllowShell = cfg.AllowShell || opts.AllowShell
	// Memory is opened only when a memory tool runs: listing is free.
	eng := &engine.Engine{Config: cfg, Memory: &engine.MemoryOpener{}}
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
