package commands

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/openheim/openheim/runtime/memory"
	"github.com/urfave/cli/v3"
)

func newCmdMemory(f *Factory) *cli.Command {
	return &cli.Command{
		Name:  "memory",
		Usage: "long-term notes the agent remembers across sessions",
		Description: `Notes saved by the remember tool (or by you) and found by search_memory.
They live in the data directory (memory/, the source of truth, and index/memory,
a search index rebuilt from it when needed). See docs/memory.md.

Examples:
  openheim memory add "The staging database is db-stage-2"
  openheim memory search staging database
  openheim memory ls --json
  openheim memory export > notes.jsonl`,
		Commands: []*cli.Command{
			newCmdMemoryAdd(f, nil), newCmdMemorySearch(f, nil), newCmdMemoryLs(f, nil),
			newCmdMemoryShow(f, nil), newCmdMemoryEdit(f, nil), newCmdMemoryRm(f, nil),
			newCmdMemoryReindex(f, nil), newCmdMemoryExport(f, nil), newCmdMemoryImport(f, nil),
		},
	}
}

// memoryArgs checks a memory subcommand's arguments against args, the
// words of its usage ("ID TEXT": at least two; "": none).
func memoryArgs(cmd *cli.Command, args string) error {
	if n := strings.Count(args, " ") + 1; args != "" && cmd.Args().Len() < n || args == "" && cmd.Args().Len() > 0 {
		return usageErr(fmt.Errorf("memory %s: expected %s", cmd.Name, orNone(args)), fmt.Sprintf("see 'openheim memory %s --help'", cmd.Name))
	}
	return nil
}

// withMemory opens the memory, runs fn on it, and closes it.
func withMemory(open func() (*memory.Memory, error), fn func(m *memory.Memory) error) error {
	m, err := open()
	if err != nil {
		return err
	}
	defer m.Close()
	return fn(m)
}

func orNone(s string) string {
	if s == "" {
		return "no arguments"
	}
	return s
}

func noteID(s string) (int64, error) {
	id, err := strconv.ParseInt(strings.TrimPrefix(s, "#"), 10, 64)
	if err != nil || id <= 0 {
		return 0, usageErr(fmt.Errorf("memory: %q is not a note id (like 12 or #12)", s), "")
	}
	return id, nil
}

// noteText reads TEXT, or stdin for "-".
func noteText(ios *IOStreams, arg string) (string, error) {
	if arg != "-" {
		return arg, nil
	}
	b, err := io.ReadAll(ios.In)
	if err != nil {
		return "", failure(err)
	}
	return string(b), nil
}

// printNote prints one note: a line for people, or JSON (with its score,
// when it is a search hit).
func printNote(ios *IOStreams, out jsonOutput, n memory.Note, score *float64) error {
	if out.machine() {
		if score != nil {
			return out.print(ios, memory.Hit{Note: n, Score: *score})
		}
		return out.print(ios, n)
	}
	_, err := fmt.Fprintf(ios.Out, "#%d  %s  %s\n", n.ID, n.UpdatedAt.Local().Format(time.DateOnly), oneLine(n.Content, 100))
	return err
}

// notFoundOr maps a missing note to exit 2, anything else to 1.
func notFoundOr(err error) error {
	if errors.Is(err, memory.ErrNotFound) || errors.Is(err, memory.ErrInvalidNote) {
		return usageErr(fmt.Errorf("memory: %w", err), "see 'openheim memory ls'")
	}
	return failure(fmt.Errorf("memory: %w", err))
}
