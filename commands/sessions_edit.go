package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/session"
	"github.com/urfave/cli/v3"
)

// SessionsRenameOptions is everything `openheim sessions rename` needs.
type SessionsRenameOptions struct {
	IO       *IOStreams
	Sessions func() (*Sessions, error)
	Ref      string
	Title    string
}

func newCmdSessionsRename(f *Factory, runF func(context.Context, *SessionsRenameOptions) error) *cli.Command {
	opts := &SessionsRenameOptions{IO: f.IOStreams, Sessions: f.Sessions}
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
			opts.Ref, opts.Title = cmd.Args().Get(0), cmd.Args().Get(1)
			return run(ctx, opts, runF, sessionsRenameRun)
		},
	}
}

func sessionsRenameRun(_ context.Context, opts *SessionsRenameOptions) error {
	s, err := opts.Sessions()
	if err != nil {
		return err
	}
	m, err := s.find("sessions rename", opts.Ref)
	if err != nil {
		return err
	}
	m.Title = session.Str(session.Title(opts.Title))
	m.UpdatedAt = time.Now().UTC()
	if err := s.Store.SaveMeta(*m); err != nil {
		return failure(err)
	}
	fmt.Fprintf(opts.IO.Out, "%s %s\n", m.ID, *m.Title)
	return nil
}

// SessionsForkOptions is everything `openheim sessions fork` needs.
type SessionsForkOptions struct {
	IO       *IOStreams
	Sessions func() (*Sessions, error)
	Config   func() (*config.Config, error)
	Runtime  func(ctx context.Context, cfg *config.Config, s *Sessions, withMCP bool) (*Runtime, func())
	Ref      string
	At       int // copy the first At messages; -1: all
}

func newCmdSessionsFork(f *Factory, runF func(context.Context, *SessionsForkOptions) error) *cli.Command {
	opts := &SessionsForkOptions{IO: f.IOStreams, Sessions: f.Sessions, Config: f.Config, Runtime: f.Runtime}
	return &cli.Command{
		Name:      "fork",
		Usage:     "copy a session (or its first N messages) into a new one",
		ArgsUsage: "ID|PREFIX|TITLE",
		Description: `Prints the new session's id; continue it with 'openheim prompt --session ID'.
A fork never separates a tool call from its result. A session an external
ACP agent ran is forked on the agent too (session/fork), whole: an agent
that cannot fork is refused, and nothing is copied.

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
			opts.Ref, opts.At = cmd.Args().First(), int(cmd.Int("at"))
			return run(ctx, opts, runF, sessionsForkRun)
		},
	}
}

func sessionsForkRun(ctx context.Context, opts *SessionsForkOptions) error {
	s, err := opts.Sessions()
	if err != nil {
		return err
	}
	m, err := s.find("sessions fork", opts.Ref)
	if err != nil {
		return err
	}
	if m.ACP != nil && opts.Runtime != nil {
		return forkOnAgent(ctx, opts, s, m)
	}
	forked, err := session.Fork(s.Store, m.ID, opts.At, time.Now())
	if err != nil {
		return failure(err)
	}
	fmt.Fprintln(opts.IO.Out, forked.ID)
	return nil
}

// SessionsExportOptions is everything `openheim sessions export` needs.
type SessionsExportOptions struct {
	IO       *IOStreams
	Sessions func() (*Sessions, error)
	Ref      string
	Format   string // md or json
	File     string // "" writes to stdout
}

func newCmdSessionsExport(f *Factory, runF func(context.Context, *SessionsExportOptions) error) *cli.Command {
	opts := &SessionsExportOptions{IO: f.IOStreams, Sessions: f.Sessions}
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
			opts.Format = cmd.String("format")
			if opts.Format != "md" && opts.Format != "json" {
				return usageErr(fmt.Errorf("sessions export: --format must be md or json, not %q", opts.Format), "")
			}
			ref, err := oneRef(cmd)
			if err != nil {
				return err
			}
			opts.Ref, opts.File = ref, cmd.String("output")
			return run(ctx, opts, runF, sessionsExportRun)
		},
	}
}

func sessionsExportRun(_ context.Context, opts *SessionsExportOptions) error {
	s, err := opts.Sessions()
	if err != nil {
		return err
	}
	conv, err := s.load("sessions export", opts.Ref)
	if err != nil {
		return err
	}
	out := opts.IO.Out
	if opts.File != "" {
		f, err := os.Create(opts.File)
		if err != nil {
			return failure(err)
		}
		defer f.Close()
		out = f
	}
	return exportConversation(out, conv, opts.Format)
}

// exportConversation writes conv as a Markdown transcript (md) or seed
// 000's Conversation object, indented (json).
func exportConversation(w io.Writer, conv *session.Conversation, format string) error {
	if format == "md" {
		writeTranscript(w, conv, true)
		return nil
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(conv)
}

// SessionsRmOptions is everything `openheim sessions rm` needs.
type SessionsRmOptions struct {
	IO        *IOStreams
	Sessions  func() (*Sessions, error)
	Config    func() (*config.Config, error)
	Runtime   func(ctx context.Context, cfg *config.Config, s *Sessions, withMCP bool) (*Runtime, func())
	Refs      []string
	Purge     bool
	KeepAgent bool // leave the agent's side of agent sessions
}

func newCmdSessionsRm(f *Factory, runF func(context.Context, *SessionsRmOptions) error) *cli.Command {
	opts := &SessionsRmOptions{IO: f.IOStreams, Sessions: f.Sessions, Config: f.Config, Runtime: f.Runtime}
	return &cli.Command{
		Name:      "rm",
		Usage:     "move sessions to the trash (or delete them with --purge)",
		ArgsUsage: "ID|PREFIX|TITLE...",
		Description: `Trashed sessions are kept in $OPENHEIM_HOME/history/trash until you delete
them; move the files back to restore one.

A session an external ACP agent ran also has a session on that agent: it is
deleted there too (session/delete) where the agent offers that, unless
--keep-agent-session (a restored session then continues on the agent).

Examples:
  openheim sessions rm 5d0c 77ab
  openheim sessions rm --purge 5d0c`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "purge", Usage: "delete for good instead of moving to the trash"},
			&cli.BoolFlag{Name: "keep-agent-session", Usage: "leave an ACP agent's own session of it"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() == 0 {
				return usageErr(fmt.Errorf("sessions rm: give at least one session"), "")
			}
			opts.Refs, opts.Purge, opts.KeepAgent = cmd.Args().Slice(), cmd.Bool("purge"), cmd.Bool("keep-agent-session")
			return run(ctx, opts, runF, sessionsRmRun)
		},
	}
}

func sessionsRmRun(ctx context.Context, opts *SessionsRmOptions) error {
	s, err := opts.Sessions()
	if err != nil {
		return err
	}
	// Resolve every reference first, so a typo removes nothing.
	var metas []*session.Meta
	for _, ref := range opts.Refs {
		m, err := s.find("sessions rm", ref)
		if err != nil {
			return err
		}
		metas = append(metas, m)
	}
	var notes map[string]string
	if !opts.KeepAgent && opts.Runtime != nil {
		agents := &agentRunners{config: opts.Config, runtime: opts.Runtime, sess: s}
		defer agents.close()
		notes = deleteOnAgents(ctx, agents, metas)
	}
	return removeSessions(opts.IO, s, metas, opts.Purge, notes)
}

// removeSessions trashes (or purges) the sessions; notes say, by id, what
// became of their agents' sessions.
func removeSessions(ios *IOStreams, s *Sessions, metas []*session.Meta, purge bool, notes map[string]string) error {
	verb := "trashed"
	for _, m := range metas {
		var err error
		if purge {
			err, verb = s.Store.Purge(m.ID), "deleted"
		} else {
			err = s.Store.Trash(m.ID)
		}
		if err != nil {
			return failure(fmt.Errorf("sessions: %s: %w", m.ID, err))
		}
		line := fmt.Sprintf("%s %s %s", verb, m.ID, deref(m.Title))
		if n := notes[m.ID]; n != "" {
			line += " " + n
		}
		fmt.Fprintln(ios.Out, line)
	}
	return nil
}
