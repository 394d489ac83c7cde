package commands

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/openheim/openheim/runtime/memory"
	"github.com/urfave/cli/v3"
)

// MemoryAddOptions is everything `openheim memory add` needs.
type MemoryAddOptions struct {
	IO     *IOStreams
	Memory func() (*memory.Memory, error)
	Text   string // "-" reads stdin
	Output jsonOutput
}

func newCmdMemoryAdd(f *Factory, runF func(context.Context, *MemoryAddOptions) error) *cli.Command {
	opts := &MemoryAddOptions{IO: f.IOStreams, Memory: f.Memory}
	return &cli.Command{Name: "add", Usage: "save a note", ArgsUsage: "TEXT|-", Flags: jsonFlags(),
		Description: `Saves TEXT as a new note (up to 4000 characters), or what stdin holds with
"-". Prints the note with its id; the agent finds it with search_memory.

Examples:
  openheim memory add "The staging database is db-stage-2"
  git log -1 --format=%B | openheim memory add -
  openheim memory add --select id "Deploys need VPN access"`,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if err := memoryArgs(cmd, "TEXT"); err != nil {
				return err
			}
			opts.Text, opts.Output = cmd.Args().First(), jsonOutputOf(cmd)
			return run(ctx, opts, runF, memoryAddRun)
		}}
}

func memoryAddRun(_ context.Context, opts *MemoryAddOptions) error {
	return withMemory(opts.Memory, func(m *memory.Memory) error {
		text, err := noteText(opts.IO, opts.Text)
		if err != nil {
			return err
		}
		n, err := m.Add(text)
		if err != nil {
			return usageErr(fmt.Errorf("memory add: %w", err), "")
		}
		return printNote(opts.IO, opts.Output, n, nil)
	})
}

// MemorySearchOptions is everything `openheim memory search` needs.
type MemorySearchOptions struct {
	IO     *IOStreams
	Memory func() (*memory.Memory, error)
	Query  string
	TopK   int // 0: memory.top_k
	Output jsonOutput
}

func newCmdMemorySearch(f *Factory, runF func(context.Context, *MemorySearchOptions) error) *cli.Command {
	opts := &MemorySearchOptions{IO: f.IOStreams, Memory: f.Memory}
	return &cli.Command{Name: "search", Usage: "find notes (keywords, or semantic when configured)", ArgsUsage: "QUERY...",
		Description: `Finds the notes that best match QUERY: those holding the exact phrase first,
then all the words, then any (stemmed: "deploys" finds "deploy"); with
[memory] embedding_provider set, the meaning too. A notice on stderr says
when results are keywords only (docs/memory.md).

Examples:
  openheim memory search staging database
  openheim memory search --top-k 3 "how do we deploy"
  openheim memory search vpn --json | jq -r .content`,
		Flags: append(jsonFlags(), &cli.IntFlag{Name: "top-k", Usage: "how many notes (1-20; default memory.top_k)"}),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if err := memoryArgs(cmd, "QUERY"); err != nil {
				return err
			}
			opts.Query, opts.TopK = strings.Join(cmd.Args().Slice(), " "), int(cmd.Int("top-k"))
			opts.Output = jsonOutputOf(cmd)
			return run(ctx, opts, runF, memorySearchRun)
		}}
}

func memorySearchRun(ctx context.Context, opts *MemorySearchOptions) error {
	return withMemory(opts.Memory, func(m *memory.Memory) error {
		hits, notice, err := m.Search(ctx, opts.Query, opts.TopK)
		if err != nil {
			return failure(fmt.Errorf("memory search: %w", err))
		}
		if notice != "" {
			fmt.Fprintf(opts.IO.ErrOut, "openheim: %s\n", notice)
		}
		for _, h := range hits {
			if err := printNote(opts.IO, opts.Output, h.Note, &h.Score); err != nil {
				return err
			}
		}
		return nil
	})
}

// MemoryLsOptions is everything `openheim memory ls` needs.
type MemoryLsOptions struct {
	IO     *IOStreams
	Memory func() (*memory.Memory, error)
	Limit  int // 0: all
	Output jsonOutput
}

func newCmdMemoryLs(f *Factory, runF func(context.Context, *MemoryLsOptions) error) *cli.Command {
	opts := &MemoryLsOptions{IO: f.IOStreams, Memory: f.Memory}
	return &cli.Command{Name: "ls", Usage: "list notes, newest first",
		Flags: append(jsonFlags(), limitFlag(0, 0, "show at most `N` notes (0: all)")),
		Description: `Lists notes, most recently changed first: id, date and the start of the
text. --json prints whole notes {id, content, created_at, updated_at}.

Examples:
  openheim memory ls
  openheim memory ls --limit 10
  openheim memory ls --select id | head -3`,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if err := memoryArgs(cmd, ""); err != nil {
				return err
			}
			opts.Output, opts.Limit = jsonOutputOf(cmd), int(cmd.Int("limit"))
			return run(ctx, opts, runF, memoryLsRun)
		}}
}

func memoryLsRun(_ context.Context, opts *MemoryLsOptions) error {
	return withMemory(opts.Memory, func(m *memory.Memory) error {
		notes, err := m.List()
		if err != nil {
			return failure(err)
		}
		if opts.Limit > 0 && len(notes) > opts.Limit {
			notes = notes[:opts.Limit]
		}
		for _, n := range notes {
			if err := printNote(opts.IO, opts.Output, n, nil); err != nil {
				return err
			}
		}
		return nil
	})
}

// MemoryShowOptions is everything `openheim memory show` needs.
type MemoryShowOptions struct {
	IO     *IOStreams
	Memory func() (*memory.Memory, error)
	ID     string // as given: 12 or #12
	Output jsonOutput
}

func newCmdMemoryShow(f *Factory, runF func(context.Context, *MemoryShowOptions) error) *cli.Command {
	opts := &MemoryShowOptions{IO: f.IOStreams, Memory: f.Memory}
	return &cli.Command{Name: "show", Usage: "print one note", ArgsUsage: "ID", Flags: jsonFlags(),
		Description: `Prints a note whole, with when it was created and last changed. ID is the
number 'memory ls' shows (12 or #12).

Examples:
  openheim memory show 12
  openheim memory show '#12' --json`,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if err := memoryArgs(cmd, "ID"); err != nil {
				return err
			}
			opts.ID, opts.Output = cmd.Args().First(), jsonOutputOf(cmd)
			return run(ctx, opts, runF, memoryShowRun)
		}}
}

func memoryShowRun(_ context.Context, opts *MemoryShowOptions) error {
	return withMemory(opts.Memory, func(m *memory.Memory) error {
		id, err := noteID(opts.ID)
		if err != nil {
			return err
		}
		n, err := m.Get(id)
		if err != nil {
			return notFoundOr(err)
		}
		if opts.Output.machine() {
			return opts.Output.print(opts.IO, n)
		}
		fmt.Fprintf(opts.IO.Out, "#%d  created %s  updated %s\n\n%s\n", n.ID, n.CreatedAt.Local().Format(time.DateTime),
			n.UpdatedAt.Local().Format(time.DateTime), n.Content)
		return nil
	})
}

// MemoryEditOptions is everything `openheim memory edit` needs.
type MemoryEditOptions struct {
	IO     *IOStreams
	Memory func() (*memory.Memory, error)
	ID     string
	Text   string // "-" reads stdin
	Output jsonOutput
}

func newCmdMemoryEdit(f *Factory, runF func(context.Context, *MemoryEditOptions) error) *cli.Command {
	opts := &MemoryEditOptions{IO: f.IOStreams, Memory: f.Memory}
	return &cli.Command{Name: "edit", Usage: "replace a note's text", ArgsUsage: "ID TEXT|-", Flags: jsonFlags(),
		Description: `Replaces the text of note ID with TEXT, or with stdin for "-". The note
keeps its id and creation date.

Examples:
  openheim memory edit 12 "The staging database is db-stage-3"
  openheim memory show 12 --select content | sed s/2/3/ | openheim memory edit 12 -`,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if err := memoryArgs(cmd, "ID TEXT"); err != nil {
				return err
			}
			opts.ID, opts.Text, opts.Output = cmd.Args().First(), cmd.Args().Get(1), jsonOutputOf(cmd)
			return run(ctx, opts, runF, memoryEditRun)
		}}
}

func memoryEditRun(_ context.Context, opts *MemoryEditOptions) error {
	return withMemory(opts.Memory, func(m *memory.Memory) error {
		id, err := noteID(opts.ID)
		if err != nil {
			return err
		}
		text, err := noteText(opts.IO, opts.Text)
		if err != nil {
			return err
		}
		n, err := m.Edit(id, text)
		if err != nil {
			return notFoundOr(err)
		}
		return printNote(opts.IO, opts.Output, n, nil)
	})
}

// MemoryRmOptions is everything `openheim memory rm` needs.
type MemoryRmOptions struct {
	IO     *IOStreams
	Memory func() (*memory.Memory, error)
	ID     string
	Output jsonOutput
}

func newCmdMemoryRm(f *Factory, runF func(context.Context, *MemoryRmOptions) error) *cli.Command {
	opts := &MemoryRmOptions{IO: f.IOStreams, Memory: f.Memory}
	return &cli.Command{Name: "rm", Usage: "delete a note for good", ArgsUsage: "ID", Flags: jsonFlags(),
		Description: `Deletes note ID. There is no trash: 'openheim memory export' first if you
may want it back.

Examples:
  openheim memory rm 12`,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if err := memoryArgs(cmd, "ID"); err != nil {
				return err
			}
			opts.ID, opts.Output = cmd.Args().First(), jsonOutputOf(cmd)
			return run(ctx, opts, runF, memoryRmRun)
		}}
}

func memoryRmRun(_ context.Context, opts *MemoryRmOptions) error {
	return withMemory(opts.Memory, func(m *memory.Memory) error {
		id, err := noteID(opts.ID)
		if err != nil {
			return err
		}
		if err := m.Delete(id); err != nil {
			return notFoundOr(err)
		}
		if opts.Output.machine() {
			return opts.Output.print(opts.IO, map[string]any{"id": id, "deleted": true})
		}
		fmt.Fprintf(opts.IO.ErrOut, "forgot #%d\n", id)
		return nil
	})
}
