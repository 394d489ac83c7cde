package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/memory"
	"github.com/urfave/cli/v3"
)

// memoryOptions are where the notes and their index live, and how search
// embeds (when the config says so).
func memoryOptions(cfg *config.Config, ios *IOStreams) memory.Options {
	home := config.Home()
	opts := memory.Options{
		Dir: filepath.Join(home, "memory"), IndexDir: filepath.Join(home, "index", "memory"),
		TopK: cfg.Memory.TopK, EmbeddingModel: cfg.Memory.EmbeddingModel,
		Warn: func(msg string) { fmt.Fprintf(ios.ErrOut, "openheim: warning: memory: %s\n", msg) },
	}
	if cfg.Memory.EmbeddingProvider != "" {
		// Without embeddings memory still works by keywords: say so, go on.
		if emb, err := engine.NewEmbedder(cfg); err != nil {
			opts.Warn(fmt.Sprintf("semantic search is off: %v (check [memory] and the provider's API key)", err))
		} else {
			opts.Embedder = emb
		}
	}
	if ios.ErrTTY {
		opts.Progress = progress(ios, "indexing memory")
	}
	return opts
}

// withMemory gives the engine the memory tools, opening the memory on
// first use; the returned func closes it.
func withMemory(e *engine.Engine, cfg *config.Config, ios *IOStreams) func() {
	e.Memory = &engine.MemoryOpener{Options: memoryOptions(cfg, ios)}
	return func() { e.Memory.Close() }
}

func openMemory(cmd *cli.Command, ios *IOStreams) (*memory.Memory, error) {
	cfg, err := loadConfig(cmd.Root().String("config"), ios)
	if err != nil {
		return nil, err
	}
	m, err := memory.Open(memoryOptions(cfg, ios))
	if err != nil {
		return nil, failure(fmt.Errorf("memory: %w", err))
	}
	return m, nil
}

// memoryAction opens the memory, runs f, and closes it.
func memoryAction(ios *IOStreams, args string, f func(ctx context.Context, cmd *cli.Command, m *memory.Memory) error) cli.ActionFunc {
	return func(ctx context.Context, cmd *cli.Command) error {
		if n := strings.Count(args, " ") + 1; args != "" && cmd.Args().Len() < n || args == "" && cmd.Args().Len() > 0 {
			return usageErr(fmt.Errorf("memory %s: expected %s", cmd.Name, orNone(args)), fmt.Sprintf("see 'openheim memory %s --help'", cmd.Name))
		}
		m, err := openMemory(cmd, ios)
		if err != nil {
			return err
		}
		defer m.Close()
		return f(ctx, cmd, m)
	}
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

func printNote(ios *IOStreams, cmd *cli.Command, n memory.Note, score *float64) error {
	if machineOutput(cmd) {
		if score != nil {
			return printJSON(ios, cmd, memory.Hit{Note: n, Score: *score})
		}
		return printJSON(ios, cmd, n)
	}
	_, err := fmt.Fprintf(ios.Out, "#%d  %s  %s\n", n.ID, n.UpdatedAt.Local().Format(time.DateOnly), oneLine(n.Content, 100))
	return err
}

func newCmdMemory(ios *IOStreams) *cli.Command {
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
			{Name: "add", Usage: "save a note", ArgsUsage: "TEXT|-", Flags: jsonFlags(),
				Action: memoryAction(ios, "TEXT", func(ctx context.Context, cmd *cli.Command, m *memory.Memory) error {
					text, err := noteText(ios, cmd.Args().First())
					if err != nil {
						return err
					}
					n, err := m.Add(text)
					if err != nil {
						return usageErr(fmt.Errorf("memory add: %w", err), "")
					}
					return printNote(ios, cmd, n, nil)
				})},
			{Name: "search", Usage: "find notes (keywords, or semantic when configured)", ArgsUsage: "QUERY...",
				Flags: append(jsonFlags(), &cli.IntFlag{Name: "top-k", Usage: "how many notes (1-20; default memory.top_k)"}),
				Action: memoryAction(ios, "QUERY", func(ctx context.Context, cmd *cli.Command, m *memory.Memory) error {
					hits, notice, err := m.Search(ctx, strings.Join(cmd.Args().Slice(), " "), int(cmd.Int("top-k")))
					if err != nil {
						return failure(fmt.Errorf("memory search: %w", err))
					}
					if notice != "" {
						fmt.Fprintf(ios.ErrOut, "openheim: %s\n", notice)
					}
					for _, h := range hits {
						if err := printNote(ios, cmd, h.Note, &h.Score); err != nil {
							return err
						}
					}
					return nil
				})},
			{Name: "ls", Usage: "list every note, newest first", Flags: jsonFlags(),
				Action: memoryAction(ios, "", func(ctx context.Context, cmd *cli.Command, m *memory.Memory) error {
					notes, err := m.List()
					if err != nil {
						return failure(err)
					}
					for _, n := range notes {
						if err := printNote(ios, cmd, n, nil); err != nil {
							return err
						}
					}
					return nil
				})},
			{Name: "show", Usage: "print one note", ArgsUsage: "ID", Flags: jsonFlags(),
				Action: memoryAction(ios, "ID", func(ctx context.Context, cmd *cli.Command, m *memory.Memory) error {
					id, err := noteID(cmd.Args().First())
					if err != nil {
						return err
					}
					n, err := m.Get(id)
					if err != nil {
						return notFoundOr(err)
					}
					if machineOutput(cmd) {
						return printJSON(ios, cmd, n)
					}
					fmt.Fprintf(ios.Out, "#%d  created %s  updated %s\n\n%s\n", n.ID, n.CreatedAt.Local().Format(time.DateTime),
						n.UpdatedAt.Local().Format(time.DateTime), n.Content)
					return nil
				})},
			{Name: "edit", Usage: "replace a note's text", ArgsUsage: "ID TEXT|-", Flags: jsonFlags(),
				Action: memoryAction(ios, "ID TEXT", func(ctx context.Context, cmd *cli.Command, m *memory.Memory) error {
					id, err := noteID(cmd.Args().First())
					if err != nil {
						return err
					}
					text, err := noteText(ios, cmd.Args().Get(1))
					if err != nil {
						return err
					}
					n, err := m.Edit(id, text)
					if err != nil {
						return notFoundOr(err)
					}
					return printNote(ios, cmd, n, nil)
				})},
			{Name: "rm", Usage: "delete a note for good", ArgsUsage: "ID", Flags: jsonFlags(),
				Action: memoryAction(ios, "ID", func(ctx context.Context, cmd *cli.Command, m *memory.Memory) error {
					id, err := noteID(cmd.Args().First())
					if err != nil {
						return err
					}
					if err := m.Delete(id); err != nil {
						return notFoundOr(err)
					}
					if machineOutput(cmd) {
						return printJSON(ios, cmd, map[string]any{"id": id, "deleted": true})
					}
					fmt.Fprintf(ios.ErrOut, "forgot #%d\n", id)
					return nil
				})},
			{Name: "reindex", Usage: "rebuild the search index (and embeddings) from the notes", Flags: jsonFlags(),
				Action: memoryAction(ios, "", func(ctx context.Context, cmd *cli.Command, m *memory.Memory) error {
					n, err := m.Reindex(ctx)
					if err != nil {
						return failure(fmt.Errorf("memory reindex: %w", err))
					}
					if machineOutput(cmd) {
						return printJSON(ios, cmd, map[string]any{"indexed": n})
					}
					fmt.Fprintf(ios.ErrOut, "indexed %d notes\n", n)
					return nil
				})},
			{Name: "export", Usage: "print every note as JSONL (always JSON), oldest first",
				Action: memoryAction(ios, "", func(ctx context.Context, cmd *cli.Command, m *memory.Memory) error {
					return m.Export(ios.Out)
				})},
			{Name: "import", Usage: "add notes from JSONL (FILE or - for stdin)", ArgsUsage: "FILE|-", Flags: jsonFlags(),
				Action: memoryAction(ios, "FILE", func(ctx context.Context, cmd *cli.Command, m *memory.Memory) error {
					var r io.Reader = ios.In
					if p := cmd.Args().First(); p != "-" {
						f, err := os.Open(p)
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
					if machineOutput(cmd) {
						return printJSON(ios, cmd, map[string]any{"imported": n})
					}
					fmt.Fprintf(ios.ErrOut, "imported %d notes\n", n)
					return nil
				})},
		},
	}
}

// notFoundOr maps a missing note to exit 2, anything else to 1.
func notFoundOr(err error) error {
	if errors.Is(err, memory.ErrNotFound) || errors.Is(err, memory.ErrInvalidNote) {
		return usageErr(fmt.Errorf("memory: %w", err), "see 'openheim memory ls'")
	}
	return failure(fmt.Errorf("memory: %w", err))
}
