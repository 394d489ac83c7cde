package commands

import (
	"context"
	"fmt"

	"github.com/openheim/openheim/runtime/config"
	"github.com/urfave/cli/v3"
)

// InitOptions is everything `openheim init` needs.
type InitOptions struct {
	IO   *IOStreams
	Home func() string // where the files go
}

func newCmdInit(f *Factory, runF func(context.Context, *InitOptions) error) *cli.Command {
	opts := &InitOptions{IO: f.IOStreams, Home: f.Home}
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
			return run(ctx, opts, runF, initRun)
		},
	}
}

func initRun(_ context.Context, opts *InitOptions) error {
	written, err := config.InitFiles(opts.Home())
	if err != nil {
		return usageErr(fmt.Errorf("init: %w", err), "")
	}
	for _, p := range written {
		fmt.Fprintf(opts.IO.Out, "wrote %s\n", p)
	}
	fmt.Fprintln(opts.IO.Out, "Next: set your API key (e.g. export OPENAI_API_KEY=...), check the setup with: openheim doctor, and run: openheim prompt \"hello\"")
	return nil
}
