package commands

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/openheim/openheim/commands/tui"
	"github.com/openheim/openheim/runtime/history"
	"github.com/urfave/cli/v3"
)

// SessionsLsOptions is everything `openheim sessions ls` needs.
type SessionsLsOptions struct {
	IO       *IOStreams
	Sessions func() (*Sessions, error)
	Filter   history.Filter
	Output   jsonOutput
}

func newCmdSessionsLs(f *Factory, runF func(context.Context, *SessionsLsOptions) error) *cli.Command {
	opts := &SessionsLsOptions{IO: f.IOStreams, Sessions: f.Sessions}
	return &cli.Command{
		Name:  "ls",
		Usage: "list sessions, newest first",
		Description: `Columns: id (first 8 characters), when it was last updated, messages,
the agent that ran it (an external ACP agent such as claude-agent-acp, or
openheim for its own), model and title. --json prints one object per
session with the full id and "agent" ("" for openheim's own).

Examples:
  openheim sessions ls
  openheim sessions ls --since 7d --cwd ~/src/app
  openheim sessions ls --limit 0 --json | jq -r .title`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "cwd", Usage: "only sessions whose work directory is `DIR`"},
			&cli.StringFlag{Name: "since", Usage: "only sessions updated within `AGE` (e.g. 12h, 7d, 2w) or since a date (2026-01-31)"},
			limitFlag(50, 0, "show at most `N` sessions (0: all)"),
		}, jsonFlags()...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if err := noArgs(cmd); err != nil {
				return err
			}
			opts.Filter = history.Filter{Limit: int(cmd.Int("limit"))}
			if dir := cmd.String("cwd"); dir != "" {
				abs, err := filepath.Abs(dir)
				if err != nil {
					return usageErr(err, "")
				}
				opts.Filter.Cwd = abs
			}
			if s := cmd.String("since"); s != "" {
				t, err := parseSince(s, time.Now())
				if err != nil {
					return usageErr(fmt.Errorf("sessions ls: --since: %w", err), "")
				}
				opts.Filter.Since = t
			}
			opts.Output = jsonOutputOf(cmd)
			return run(ctx, opts, runF, sessionsLsRun)
		},
	}
}

func sessionsLsRun(_ context.Context, opts *SessionsLsOptions) error {
	s, err := opts.Sessions()
	if err != nil {
		return err
	}
	list, err := s.Catalog.List(opts.Filter)
	if err != nil {
		return failure(fmt.Errorf("sessions: %w", err))
	}
	if opts.Output.machine() {
		for _, s := range list {
			if err := opts.Output.print(opts.IO, toJSON(s)); err != nil {
				return err
			}
		}
		return nil
	}
	if len(list) == 0 {
		if opts.Filter.Cwd != "" || !opts.Filter.Since.IsZero() {
			fmt.Fprintln(opts.IO.ErrOut, "No sessions match"+filterWords(opts.Filter)+".")
			return nil
		}
		fmt.Fprintln(opts.IO.ErrOut, "No sessions yet. Start one with: openheim prompt \"...\"")
		return nil
	}
	tw := newTable(opts.IO.Out)
	fmt.Fprintln(tw, "ID\tUPDATED\tMSGS\tAGENT\tMODEL\tTITLE")
	for _, s := range list {
		agent, model := agentOf(s), s.Model
		if agent == "" {
			agent = "openheim"
		} else {
			model = "" // the agent's own
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", s.ID[:8], ago(s.UpdatedAt, time.Now()), s.Messages, agent, orDash(model), oneLine(s.Title, 60))
	}
	return tw.Flush()
}

// filterWords says what a listing was narrowed to.
func filterWords(f history.Filter) string {
	var parts []string
	if f.Cwd != "" {
		parts = append(parts, "in "+f.Cwd)
	}
	if !f.Since.IsZero() {
		parts = append(parts, "updated since "+f.Since.Local().Format(time.DateTime))
	}
	return " " + strings.Join(parts, ", ")
}

// SessionsShowOptions is everything `openheim sessions show` needs.
type SessionsShowOptions struct {
	IO       *IOStreams
	Sessions func() (*Sessions, error)
	Ref      string // id, id prefix or title
	Output   jsonOutput
}

func newCmdSessionsShow(f *Factory, runF func(context.Context, *SessionsShowOptions) error) *cli.Command {
	opts := &SessionsShowOptions{IO: f.IOStreams, Sessions: f.Sessions}
	return &cli.Command{
		Name:      "show",
		Usage:     "print a session's transcript",
		ArgsUsage: "ID|PREFIX|TITLE",
		Description: `Prints the conversation for a person (long tool outputs cut to their first
lines). --json prints seed 000's Conversation object {meta, messages}.

Examples:
  openheim sessions show 5d0c
  openheim sessions show 5d0c --json | jq '.messages | length'`,
		Flags: jsonFlags(),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			ref, err := oneRef(cmd)
			if err != nil {
				return err
			}
			opts.Ref, opts.Output = ref, jsonOutputOf(cmd)
			return run(ctx, opts, runF, sessionsShowRun)
		},
	}
}

func sessionsShowRun(_ context.Context, opts *SessionsShowOptions) error {
	s, err := opts.Sessions()
	if err != nil {
		return err
	}
	conv, err := s.load("sessions show", opts.Ref)
	if err != nil {
		return err
	}
	if opts.Output.machine() {
		return opts.Output.print(opts.IO, conv)
	}
	// On a terminal: through the pager, the markdown rendered in colour.
	stop := opts.IO.StartPager()
	defer stop()
	if !opts.IO.OutColor {
		writeTranscript(opts.IO.Out, conv, false)
		return nil
	}
	style, _ := tui.NewStyle("", true)
	md := tui.NewMarkdown(opts.IO.Out, style)
	writeTranscript(md, conv, false)
	md.Flush()
	return nil
}

// SessionsSearchOptions is everything `openheim sessions search` needs.
type SessionsSearchOptions struct {
	IO       *IOStreams
	Sessions func() (*Sessions, error)
	Query    string
	Limit    int
	Output   jsonOutput
}

func newCmdSessionsSearch(f *Factory, runF func(context.Context, *SessionsSearchOptions) error) *cli.Command {
	opts := &SessionsSearchOptions{IO: f.IOStreams, Sessions: f.Sessions}
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
			limitFlag(20, 1, "show at most `N` sessions"),
		}, jsonFlags()...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() == 0 {
				return usageErr(fmt.Errorf("sessions search: give a query"), `openheim sessions search "words"`)
			}
			opts.Query = strings.Join(cmd.Args().Slice(), " ")
			opts.Limit, opts.Output = int(cmd.Int("limit")), jsonOutputOf(cmd)
			return run(ctx, opts, runF, sessionsSearchRun)
		},
	}
}

// searchHitJSON is one line of `sessions search --json`.
type searchHitJSON struct {
	SessionID string    `json:"session_id"`
	Title     string    `json:"title"`
	UpdatedAt time.Time `json:"updated_at"`
	Message   int       `json:"message"`
	Score     float64   `json:"score"`
	Snippet   string    `json:"snippet"`
}

func sessionsSearchRun(_ context.Context, opts *SessionsSearchOptions) error {
	s, err := opts.Sessions()
	if err != nil {
		return err
	}
	hits, behind, err := s.Catalog.SearchBehind(opts.Query, opts.Limit)
	if err != nil {
		return failure(fmt.Errorf("sessions search: %w", err))
	}
	if behind > 0 {
		// On stderr, in --json mode too: the answer is partial.
		fmt.Fprintf(opts.IO.ErrOut, "openheim: the search index is catching up: %d sessions not searched yet (each search indexes more; 'openheim sessions reindex' finishes now)\n", behind)
	}
	if opts.Output.machine() {
		for _, h := range hits {
			if err := opts.Output.print(opts.IO, searchHitJSON{h.Session.ID, h.Session.Title, h.Session.UpdatedAt.UTC(),
				h.Message, h.Score, h.Snippet}); err != nil {
				return err
			}
		}
		return nil
	}
	if len(hits) == 0 {
		fmt.Fprintf(opts.IO.ErrOut, "No session mentions %q.\n", opts.Query)
		return nil
	}
	tw := newTable(opts.IO.Out)
	fmt.Fprintln(tw, "ID\tUPDATED\tTITLE\tMATCH")
	for _, h := range hits {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", h.Session.ID[:8], ago(h.Session.UpdatedAt, time.Now()), oneLine(h.Session.Title, 40), oneLine(h.Snippet, 100))
	}
	return tw.Flush()
}
