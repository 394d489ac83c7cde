package commands

import (
	"context"
	"fmt"
	"io"
	"runtime"

	"github.com/urfave/cli/v3"
)

func init() {
	// --version and `openheim version` print the same line.
	cli.VersionPrinter = func(cmd *cli.Command) { printVersion(cmd.Root().Writer, cmd.Root().Version) }
}

func printVersion(w io.Writer, version string) {
	fmt.Fprintf(w, "openheim version %s (%s %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func newCmdVersion(f *Factory) *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print openheim's version",
		Description: `Prints the version of this binary, the Go it was built with and the
platform: the same line as 'openheim --version'.

Examples:
  openheim version`,
		Action: func(_ context.Context, cmd *cli.Command) error {
			if err := noArgs(cmd); err != nil {
				return err
			}
			printVersion(f.IOStreams.Out, f.Version)
			return nil
		},
	}
}

func newCmdHelp() *cli.Command {
	return &cli.Command{
		Name:      "help",
		Usage:     "show the help of openheim or of a command",
		ArgsUsage: "[COMMAND...]",
		Description: `Shows the same help as --help: 'openheim help sessions ls' is
'openheim sessions ls --help'.

Examples:
  openheim help
  openheim help prompt
  openheim help sessions ls`,
		Action: helpRun,
		ShellComplete: func(_ context.Context, cmd *cli.Command) {
			target := cmd.Root()
			for _, name := range cmd.Args().Slice() {
				if next := target.Command(name); next != nil {
					target = next
				}
			}
			for _, c := range target.VisibleCommands() {
				fmt.Fprintf(cmd.Root().Writer, "%s:%s\n", c.Name, c.Usage)
			}
		},
	}
}

// helpRun shows the help of the command the arguments name, from the root.
func helpRun(ctx context.Context, cmd *cli.Command) error {
	target := cmd.Root()
	for _, name := range cmd.Args().Slice() {
		next := target.Command(name)
		if next == nil || next.Hidden && next.Name != name {
			return unknownCommand(target, name)
		}
		target = next
	}
	switch {
	case target == cmd.Root():
		return cli.ShowAppHelp(target)
	case len(target.VisibleCommands()) > 0:
		return cli.ShowSubcommandHelp(target)
	}
	return cli.ShowCommandHelp(ctx, target.Lineage()[1], target.Name)
}
