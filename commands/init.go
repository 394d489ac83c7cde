package commands

import (
	"context"
	"fmt"

	"github.com/openheim/openheim/runtime/config"
	"github.com/urfave/cli/v3"
)

func newCmdInit(ios *IOStreams) *cli.Command {
	return &cli.Command{
		Name:  "init",
		Usage: "write a commented config.toml and system.md",
		Description: `Creates the data directory ($OPENHEIM_HOME, else ~/.openheim) with a
commented config.toml and a default system.md. It never overwrites: if either
file exists, nothing is written.

Examples:
  openheim init
  OPENHEIM_HOME=/tmp/oh openheim init`,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if err := noArgs(cmd); err != nil {
				return err
			}
			written, err := config.InitFiles(config.Home())
			if err != nil {
				return usageErr(fmt.Errorf("init: %w", err), "")
			}
			for _, p := range written {
				fmt.Fprintf(ios.Out, "wrote %s\n", p)
			}
			fmt.Fprintln(ios.Out, "Next: set your API key (e.g. export OPENAI_API_KEY=...) and run: openheim prompt \"hello\"")
			return nil
		},
	}
}
