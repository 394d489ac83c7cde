package commands

import (
	"context"
	"strings"

	"github.com/openheim/openheim/runtime/tools"
	"github.com/urfave/cli/v3"
)

func newCmdTools(ios *IOStreams) *cli.Command {
	return &cli.Command{
		Name:  "tools",
		Usage: "list the tools the agent can call",
		Description: `Lists the built-in tools with their kind and a one-line description.
execute_command appears only when allow_shell is on (or with --allow-shell).
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
			cfg, err := loadConfig(cmd.Root().String("config"), ios)
			if err != nil {
				return err
			}
			reg, err := tools.Builtins(tools.Options{WorkDir: cfg.WorkDir, AllowShell: cfg.AllowShell || cmd.Bool("allow-shell")})
			if err != nil {
				return failure(err)
			}
			return printTools(ios, cmd, reg.Tools())
		},
	}
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}
