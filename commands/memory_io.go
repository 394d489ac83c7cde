package commands

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/openheim/openheim/runtime/memory"
	"github.com/urfave/cli/v3"
)

// MemoryReindexOptions is everything `openheim memory reindex` needs.
type MemoryReindexOptions struct {
	IO     *IOStreams
	Memory func() (*memory.Memory, error)
	Output jsonOutput
}

func newCmdMemoryReindex(f *Factory, runF func(context.Context, *MemoryReindexOptions) error) *cli.Command {
	opts := &MemoryReindexOptions{IO: f.IOStreams, Memory: f.Memory}
	return &cli.Command{Name: "reindex", Usage: "rebuild the search index (and embeddings) from the notes", Flags: jsonFlags(),
		Description: `Rebuilds index/memory from the notes (the source of truth), and with
embeddings configured computes every note's vector again: after changing
embedding_model, or when search warns the index is unusable.

Examples:
  openheim memory reindex`,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if err := memoryArgs(cmd, ""); err != nil {
				return err
			}
			opts.Output = jsonOutputOf(cmd)
			return run(ctx, opts, runF, memoryReindexRun)
		}}
}

func memoryReindexRun(ctx context.Context, opts *MemoryReindexOptions) error {
	return withMemory(opts.Memory, func(m *memory.Memory) error {
		n, err := m.Reindex(ctx)
		if err != nil {
			return failure(fmt.Errorf("memory reindex: %w", err))
		}
		if opts.Output.machine() {
			return opts.Output.print(opts.IO, map[string]any{"indexed": n})
		}
		fmt.Fprintf(opts.IO.ErrOut, "indexed %d notes\n", n)
		return nil
	})
}

// MemoryExportOptions is everything `openheim memory export` needs.
type MemoryExportOptions struct {
	IO     *IOStreams
	Memory func() (*memory.Memory, error)
}

func newCmdMemoryExport(f *Factory, runF func(context.Context, *MemoryExportOptions) error) *cli.Command {
	opts := &MemoryExportOptions{IO: f.IOStreams, Memory: f.Memory}
	return &cli.Command{Name: "export", Usage: "print every note as JSONL (always JSON), oldest first",
		Description: `Prints one {id, content, created_at, updated_at} per line, oldest first: a
backup that 'openheim memory import' reads back.

Examples:
  openheim memory export > notes.jsonl
  openheim memory export | jq -r .content`,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if err := memoryArgs(cmd, ""); err != nil {
				return err
			}
			return run(ctx, opts, runF, memoryExportRun)
		}}
}

func memoryExportRun(_ context.Context, opts *MemoryExportOptions) error {
	return withMemory(opts.Memory, func(m *memory.Memory) error { return m.Export(opts.IO.Out) })
}

// MemoryImportOptions is everything `openheim memory import` needs.
type MemoryImportOptions struct {
	IO     *IOStreams
	Memory func() (*memory.Memory, error)
	File   string // "-" reads stdin
	Output jsonOutput
}

func newCmdMemoryImport(f *Factory, runF func(context.Context, *MemoryImportOptions) error) *cli.Command {
	opts := &MemoryImportOptions{IO: f.IOStreams, Memory: f.Memory}
	return &cli.Command{Name: "import", Usage: "add notes from JSONL (FILE or - for stdin)", ArgsUsage: "FILE|-", Flags: jsonFlags(),
		Description: `Adds the notes of FILE (or stdin for "-"), one {content, created_at?,
updated_at?} per line, with new ids. Exact duplicates of existing notes are
skipped, so importing twice adds nothing; a bad line fails the whole import
before anything is written.

Examples:
  openheim memory import notes.jsonl
  ssh old-laptop openheim memory export | openheim memory import -`,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if err := memoryArgs(cmd, "FILE"); err != nil {
				return err
			}
			opts.File, opts.Output = cmd.Args().First(), jsonOutputOf(cmd)
			return run(ctx, opts, runF, memoryImportRun)
		}}
}

func memoryImportRun(_ context.Context, opts *MemoryImportOptions) error {
	return withMemory(opts.Memory, func(m *memory.Memory) error {
		var r io.Reader = opts.IO.In
		if opts.File != "-" {
			f, err := os.Open(opts.File)
			if err != nil {
				return usageErr(fmt.Errorf("memory import: %w", err), "")
			}
			defer f.Close()
			r = f
		}
		n, err := m.Import(r)
		if err != nil {
			return failure(fmt.Errorf("memory import: %w", err))
		}
		if opts.Output.machine() {
			return opts.Output.print(opts.IO, map[string]any{"imported": n})
		}
		fmt.Fprintf(opts.IO.ErrOut, "imported %d notes\n", n)
		return nil
	})
}
