// Package commands holds one file per subcommand: each parses its flags into
// an Options struct and calls a plain run function that tests call directly.
// No engine logic lives here.
package commands

import (
	"context"
	"errors"
	"fmt"

	"path/filepath"

	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/session"
	"github.com/urfave/cli/v3"
)

// buildVersion is the running binary's version (reported to ACP agents it
// starts).
var buildVersion = "dev"

// NewRoot builds the openheim CLI.
func NewRoot(ios *IOStreams, version string) *cli.Command {
	setupLogging(ios.ErrOut)
	buildVersion = version
	root := &cli.Command{
		Name:    "openheim",
		Usage:   "a multi-provider LLM agent runtime",
		Version: version,
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
		Reader:          ios.In,
		Writer:          ios.Out,
		ErrWriter:       ios.ErrOut,
		HideHelpCommand: true,
		Suggest:         true,
		OnUsageError:    onUsageError,
		ExitErrHandler:  func(context.Context, *cli.Command, error) {},
		Commands: []*cli.Command{
			newCmdPrompt(ios, version),
			newCmdChat(ios, version),
			newCmdACP(ios, version),
			newCmdServe(ios, version),
			newCmdMCP(ios, version),
			newCmdSkills(ios),
			newCmdMemory(ios),
			newCmdSessions(ios),
			newCmdTools(ios),
			newCmdInit(ios),
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 0 {
				return usageErr(fmt.Errorf("unknown command %q", cmd.Args().First()), "see 'openheim --help' for the commands")
			}
			return cli.ShowAppHelp(cmd)
		},
	}
	var setUsage func(cs []*cli.Command)
	setUsage = func(cs []*cli.Command) {
		for _, c := range cs {
			c.OnUsageError = onUsageError
			setUsage(c.Commands)
		}
	}
	setUsage(root.Commands)
	return root
}

func onUsageError(_ context.Context, cmd *cli.Command, err error, _ bool) error {
	name := "openheim"
	if cmd.Name != "openheim" {
		name += " " + cmd.Name
	}
	return usageErr(fmt.Errorf("%s: %w", cmd.Name, err), fmt.Sprintf("see '%s --help'", name))
}

// loadConfig loads the configuration at path ("" = the default file).
func loadConfig(path string, ios *IOStreams) (*config.Config, error) {
	cfg, err := config.LoadWith(path, ios.ErrOut)
	if err != nil {
		return nil, usageErr(err, "check the file, or run 'openheim init' to write a commented one")
	}
	// From here on, stderr and the log mask the config's secrets: every
	// error printed at exit (PrintError) included.
	ios.useRedactor(cfg.Redactor())
	return cfg, nil
}

// openStore opens the session store under the data directory.
func openStore() (*session.FileStore, error) {
	store, err := session.NewFileStore(filepath.Join(config.Home(), "history"))
	if err != nil {
		return nil, failure(err)
	}
	return store, nil
}

// noArgs rejects stray positional arguments.
func noArgs(cmd *cli.Command) error {
	if cmd.Args().Len() > 0 {
		return usageErr(fmt.Errorf("%s: unexpected argument %q", cmd.Name, cmd.Args().First()),
			fmt.Sprintf("see 'openheim %s --help'", cmd.Name))
	}
	return nil
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
