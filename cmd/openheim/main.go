// Command openheim is the openheim CLI: it builds the command tree and maps
// errors to exit codes. Nothing else.
package main

import (
	"context"
	"os"

	"github.com/openheim/openheim/commands"
	"github.com/openheim/openheim/runtime/childproc"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// atExit runs before the process exits (the pprof build hooks in here).
var atExit []func()

func main() {
	ios := commands.System()
	err := commands.NewRoot(ios, version).Run(context.Background(), os.Args)
	if err != nil {
		commands.PrintError(ios, err)
	}
	for _, f := range atExit {
		f()
	}
	// Whatever the commands' own cleanup left (a shell command's
	// background jobs) does not outlive openheim.
	childproc.KillAll()
	os.Exit(commands.CodeOf(err))
}
