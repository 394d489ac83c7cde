package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/openheim/openheim/runtime/session"
	"github.com/urfave/cli/v3"
)

func newCmdSessionsSearch(ios *IOStreams) *cli.Command {
	return &cli.Command{
		Name:      "search",
		Usage:     "find sessions by what was said in them",
		ArgsUsage: "QUERY",
		Description: `Full-text search over every message's text, tool calls and their results,
and titles. Sessions matching all words rank above those matching some,
exact phrases above scattered words, and newer sessions win ties.

Examples:
  openheim sessions search "refresh token"
  openheim sessions search migration --limit 5 --select session_id`,
		Flags: append([]cli.Flag{
			&cli.IntFlag{Name: "limit", Value: 20, Usage: "show at most `N` sessions"},
		}, jsonFlags()...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() == 0 {
				return usageErr(fmt.Errorf("sessions search: give a query"), `openheim sessions search "words"`)
			}
			query := joinArgs(cmd)
			env, err := openSessions(ios)
			if err != nil {
				return err
			}
			hits, err := env.catalog.Search(query, int(cmd.Int("limit")))
			if err != nil {
				return failure(fmt.Errorf("sessions search: %w", err))
			}
			if machineOutput(cmd) {
				for _, h := range hits {
					if err := printJSON(ios, cmd, struct {
						SessionID string    `json:"session_id"`
						Title     string    `json:"title"`
						UpdatedAt time.Time `json:"updated_at"`
						Message   int       `json:"message"`
						Score     float64   `json:"score"`
						Snippet   string    `json:"snippet"`
					}{h.Session.ID, h.Session.Title, h.Session.UpdatedAt.UTC(), h.Message, h.Score, h.Snippet}); err != nil {
						return err
					}
				}
				return nil
			}
			if len(hits) == 0 {
				fmt.Fprintf(ios.ErrOut, "No session mentions %q.\n", query)
				return nil
			}
			tw := tabwriter.NewWriter(ios.Out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tUPDATED\tTITLE\tMATCH")
			for _, h := range hits {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", h.Session.ID[:8], ago(h.Session.UpdatedAt, time.Now()), oneLine(h.Session.Title, 40), oneLine(h.Snippet, 100))
			}
			return tw.Flush()
		},
	}
}

func joinArgs(cmd *cli.Command) string {
	out := ""
	for i, a := range cmd.Args().Slice() {
		if i > 0 {
			out += " "
		}
		out += a
	}
	return out
}

func newCmdSessionsRename(ios *IOStreams) *cli.Command {
	return &cli.Command{
		Name:      "rename",
		Usage:     "change a session's title",
		ArgsUsage: "ID|PREFIX|TITLE NEW-TITLE",
		Description: `Examples:
  openheim sessions rename 5d0c "JWT refactor"`,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() != 2 || cmd.Args().Get(1) == "" {
				return usageErr(fmt.Errorf("sessions rename: give a session and a new title"), `openheim sessions rename 5d0c "new title"`)
			}
			env, m, err := findArg(ios, cmd)
			if err != nil {
				return err
			}
			m.Title = session.Str(session.Title(cmd.Args().Get(1)))
			m.UpdatedAt = time.Now().UTC()
			if err := env.store.SaveMeta(*m); err != nil {
				return failure(err)
			}
			fmt.Fprintf(ios.Out, "%s %s\n", m.ID, *m.Title)
			return nil
		},
	}
}

func newCmdSessionsFork(ios *IOStreams) *cli.Command {
	return &cli.Command{
		Name:      "fork",
		Usage:     "copy a session (or its first N messages) into a new one",
		ArgsUsage: "ID|PREFIX|TITLE",
		Description: `Prints the new session's id; continue it with 'openheim prompt --session ID'.
A fork never separates a tool call from its result.

Examples:
  openheim sessions fork 5d0c
  openheim prompt --session "$(openheim sessions fork 5d0c --at 2)" "try it another way"`,
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "at", Value: -1, Usage: "copy only the first `N` messages (default: all)"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() != 1 {
				return usageErr(fmt.Errorf("sessions fork: give one session"), "")
			}
			env, m, err := findArg(ios, cmd)
			if err != nil {
				return err
			}
			forked, err := session.Fork(env.store, m.ID, int(cmd.Int("at")), time.Now())
			if err != nil {
				return failure(err)
			}
			fmt.Fprintln(ios.Out, forked.ID)
			return nil
		},
	}
}

func newCmdSessionsExport(ios *IOStreams) *cli.Command {
	return &cli.Command{
		Name:      "export",
		Usage:     "write a session as Markdown or JSON",
		ArgsUsage: "ID|PREFIX|TITLE",
		Description: `md is the whole transcript for people; json is seed 000's Conversation
object, indented.

Examples:
  openheim sessions export 5d0c --format md > auth-refactor.md
  openheim sessions export 5d0c --format json -o session.json`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Value: "md", Usage: "`md` or json"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to `FILE` instead of stdout"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			format := cmd.String("format")
			if format != "md" && format != "json" {
				return usageErr(fmt.Errorf("sessions export: --format must be md or json, not %q", format), "")
			}
			_, conv, err := loadRef(ios, cmd)
			if err != nil {
				return err
			}
			out := ios.Out
			if path := cmd.String("output"); path != "" {
				f, err := os.Create(path)
				if err != nil {
					return failure(err)
				}
				defer f.Close()
				out = f
			}
			if format == "md" {
				writeTranscript(out, conv, true)
				return nil
			}
			enc := json.NewEncoder(out)
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false)
			return enc.Encode(conv)
		},
	}
}

func newCmdSessionsRm(ios *IOStreams) *cli.Command {
	return &cli.Command{
		Name:      "rm",
		Usage:     "move sessions to the trash (or delete them with --purge)",
		ArgsUsage: "ID|PREFIX|TITLE...",
		Description: `Trashed sessions are kept in $OPENHEIM_HOME/history/trash until you delete
them; move the files back to restore one.

Examples:
  openheim sessions rm 5d0c 77ab
  openheim sessions rm --purge 5d0c`,
		Flags: []cli.Flag{&cli.BoolFlag{Name: "purge", Usage: "delete for good instead of moving to the trash"}},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() == 0 {
				return usageErr(fmt.Errorf("sessions rm: give at least one session"), "")
			}
			env, err := openSessions(ios)
			if err != nil {
				return err
			}
			// Resolve every reference first, so a typo removes nothing.
			var metas []*session.Meta
			for _, ref := range cmd.Args().Slice() {
				m, err := env.find("sessions rm", ref)
				if err != nil {
					return err
				}
				metas = append(metas, m)
			}
			return removeSessions(ios, env, metas, cmd.Bool("purge"))
		},
	}
}

func removeSessions(ios *IOStreams, env *sessionsEnv, metas []*session.Meta, purge bool) error {
	verb := "trashed"
	for _, m := range metas {
		var err error
		if purge {
			err, verb = env.store.Purge(m.ID), "deleted"
		} else {
			err = env.store.Trash(m.ID)
		}
		if err != nil {
			return failure(fmt.Errorf("sessions: %s: %w", m.ID, err))
		}
		fmt.Fprintf(ios.Out, "%s %s %s\n", verb, m.ID, deref(m.Title))
	}
	return nil
}

func newCmdSessionsPrune(ios *IOStreams) *cli.Command {
	return &cli.Command{
		Name:  "prune",
		Usage: "move sessions not updated for a while to the trash",
		Description: `Nothing is pruned unless you give --older-than. Sessions go to the trash;
add --purge to delete them for good.

Examples:
  openheim sessions prune --older-than 90d --dry-run
  openheim sessions prune --older-than 26w`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "older-than", Usage: "prune sessions last updated more than `AGE` ago (e.g. 90d, 12w)"},
			&cli.BoolFlag{Name: "dry-run", Usage: "only list what would be pruned"},
			&cli.BoolFlag{Name: "purge", Usage: "delete for good instead of moving to the trash"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if err := noArgs(cmd); err != nil {
				return err
			}
			if cmd.String("older-than") == "" {
				return usageErr(fmt.Errorf("sessions prune: --older-than is required"), "openheim sessions prune --older-than 90d --dry-run")
			}
			age, err := parseAge(cmd.String("older-than"))
			if err != nil {
				return usageErr(fmt.Errorf("--older-than: %w", err), "")
			}
			env, err := openSessions(ios)
			if err != nil {
				return err
			}
			all, err := env.files.List()
			if err != nil {
				return failure(err)
			}
			cutoff := time.Now().Add(-age)
			var old []*session.Meta
			for i := range all {
				if all[i].UpdatedAt.Before(cutoff) {
					old = append(old, &all[i])
				}
			}
			if cmd.Bool("dry-run") {
				for _, m := range old {
					fmt.Fprintf(ios.Out, "would prune %s %s %s\n", m.ID, m.UpdatedAt.Local().Format(time.DateOnly), deref(m.Title))
				}
				fmt.Fprintf(ios.ErrOut, "%d of %d sessions are older than %s\n", len(old), len(all), cmd.String("older-than"))
				return nil
			}
			return removeSessions(ios, env, old, cmd.Bool("purge"))
		},
	}
}

func newCmdSessionsReindex(ios *IOStreams) *cli.Command {
	return &cli.Command{
		Name:  "reindex",
		Usage: "rebuild the session search index from the stored sessions",
		Description: `The index under $OPENHEIM_HOME/index/sessions is derived data: it is kept
in step automatically and rebuilt when missing. Run this if it was damaged.

Examples:
  openheim sessions reindex`,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if err := noArgs(cmd); err != nil {
				return err
			}
			env, err := openSessions(ios)
			if err != nil {
				return err
			}
			start := time.Now()
			session.SweepSpares(env.files.Dir) // files left by crashed processes
			n, err := env.catalog.Reindex()
			if err != nil {
				return failure(fmt.Errorf("sessions reindex: %w", err))
			}
			fmt.Fprintf(ios.Out, "indexed %d sessions in %s\n", n, time.Since(start).Round(time.Millisecond))
			return nil
		},
	}
}
