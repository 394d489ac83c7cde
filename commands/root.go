// Package commands holds one file per subcommand, in the shape of the GitHub
// CLI: an XOptions struct with the command's injected dependencies (from the
// Factory) and flags, a newCmdX(f, runF) constructor that only parses flags
// into it, and an xRun(ctx, opts) function holding the behaviour, which
// tests call directly (or replace with runF to check the flag parsing).
// No engine logic lives here.
package commands

import (
	"context"
	"errors"
	"fmt"

	"github.com/urfave/cli/v3"
)

// NewRoot builds the openheim CLI.
func NewRoot(ios *IOStreams, version string) *cli.Command {
	setupLogging(ios.ErrOut)
	return newRoot(NewFactory(ios, version))
}

// newRoot builds the command tree on f; --config reaches f.Config through
// f.ConfigPath.
func newRoot(f *Factory) *cli.Command {
	root := rootCommand(f,
		newCmdPrompt(f, nil),
		newCmdChat(f, nil),
		newCmdACP(f, nil),
		newCmdServe(f, nil),
		newCmdMCP(f),
		newCmdSkills(f, nil),
		newCmdMemory(f),
		newCmdSessions(f),
		newCmdCluster(f),
		newCmdTools(f, nil),
		newCmdInit(f, nil),
		newCmdDoctor(f, nil),
		newCmdVersion(f),
		newCmdHelp(),
	)
	f.ConfigPath = func() string { return root.String("config") }
	return root
}

// rootCommand is the root over cmds: the global flags, the streams, and
// usage errors mapped to exit code 2 at every level. Tests run single
// commands under it.
func rootCommand(f *Factory, cmds ...*cli.Command) *cli.Command {
	ios := f.IOStreams
	root := &cli.Command{
		Name:    "openheim",
		Usage:   "a multi-provider LLM agent runtime",
		Version: f.Version,
		Description: `openheim runs an iterative agent loop: it calls an LLM, runs tools inside the
work directory for it, feeds the results back, and repeats until the task is done.

Examples:
  openheim init                                 # write ~/.openheim/config.toml and system.md
  openheim prompt "summarise README.md"         # one turn, answer on stdout
  openheim chat                                 # an interactive session
  openheim prompt --json "fix the tests" | jq . # NDJSON events for scripts
  openheim tools                                # the tools the agent can call`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "config", Usage: "read configuration from `FILE` (default $OPENHEIM_HOME/config.toml)"},
		},
		Reader:                          ios.In,
		Writer:                          ios.Out,
		ErrWriter:                       ios.ErrOut,
		HideHelpCommand:                 true,
		EnableShellCompletion:           true,
		ConfigureShellCompletionCommand: setupCompletion,
		Suggest:                         true,
		OnUsageError:                    onUsageError,
		ExitErrHandler:                  func(context.Context, *cli.Command, error) {},
		Commands:                        cmds,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return unknownCommand(cmd, cmd.Args().First())
			}
			return cli.ShowAppHelp(cmd)
		},
	}
	var setUsage func(cs []*cli.Command, path string)
	setUsage = func(cs []*cli.Command, path string) {
		for _, c := range cs {
			c.OnUsageError = onUsageError
			if len(c.Commands) > 0 && c.Action == nil {
				c.Action = groupAction
			}
			if c.ShellComplete == nil {
				c.ShellComplete = completeWith(f, argCompletions[path+c.Name])
			}
			setUsage(c.Commands, path+c.Name+" ")
		}
	}
	setUsage(root.Commands, "")
	return root
}

// PrintError writes err to stderr as `openheim: <what failed>: <why>` plus a
// hint, unless the command already reported it.
func PrintError(ios *IOStreams, err error) {
	var ee *ExitError
	if errors.As(err, &ee) {
		if ee.Silent {
			return
		}
		if ee.Err != nil {
			fmt.Fprintf(ios.ErrOut, "openheim: %v\n", ee.Err)
		}
		if ee.Hint != "" {
			fmt.Fprintf(ios.ErrOut, "hint: %s\n", ee.Hint)
		}
		return
	}
	fmt.Fprintf(ios.ErrOut, "openheim: %v\n", err)
}

// run calls runF when a test gave one (to see what the flags parsed into),
// else the command's own run function.
func run[O any](ctx context.Context, opts *O, runF, own func(context.Context, *O) error) error {
	if runF != nil {
		return runF(ctx, opts)
	}
	return own(ctx, opts)
}
