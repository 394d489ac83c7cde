package commands

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/openheim/openheim/protocol/acp/host"
	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/history"
	"github.com/openheim/openheim/runtime/session"
	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v3"
)

func newCmdSessions(ios *IOStreams) *cli.Command {
	return &cli.Command{
		Name:  "sessions",
		Usage: "list, search, show and manage stored sessions",
		Description: `Every prompt runs in a session kept under $OPENHEIM_HOME/history. These
commands find and manage them. A session can be named by its full id, any
unique id prefix (4+ characters) or its exact title. Nothing is deleted
unless you ask: rm and prune move sessions to history/trash; --purge deletes.

Examples:
  openheim sessions ls --limit 10
  openheim sessions search "jwt refresh token"
  openheim sessions show 5d0c
  openheim sessions ls --cwd "$PWD" --select id | head -1
  openheim sessions fork 5d0c --at 4
  openheim sessions export 5d0c --format md > session.md
  openheim sessions prune --older-than 90d --dry-run`,
		Commands: []*cli.Command{
			newCmdSessionsLs(ios), newCmdSessionsShow(ios), newCmdSessionsSearch(ios),
			newCmdSessionsRename(ios), newCmdSessionsFork(ios), newCmdSessionsExport(ios),
			newCmdSessionsRm(ios), newCmdSessionsPrune(ios), newCmdSessionsReindex(ios),
		},
	}
}

// sessionsEnv is what every sessions subcommand works on.
type sessionsEnv struct {
	files   *session.FileStore
	store   session.Store // files, marking changed sessions for re-indexing
	catalog *history.Catalog
}

func openSessions(ios *IOStreams) (*sessionsEnv, error) {
	files, err := openStore()
	if err != nil {
		return nil, err
	}
	cat := &history.Catalog{
		Store:    files,
		IndexDir: filepath.Join(config.Home(), "index", "sessions"),
		Warn:     func(msg string) { fmt.Fprintf(ios.ErrOut, "openheim: warning: %s\n", msg) },
	}
	if ios.ErrTTY {
		cat.Progress = progress(ios, "indexing sessions")
	}
	return &sessionsEnv{files: files, store: &history.Tracked{Store: files, Catalog: cat}, catalog: cat}, nil
}

// newEngine runs turns on env's sessions, one at a time per session; a
// subagent profile naming an ACP agent runs on it.
func newEngine(cfg *config.Config, env *sessionsEnv) *engine.Engine {
	e := &engine.Engine{Config: cfg, Store: env.store, Locker: &session.Locker{Dir: env.files.Dir, Warn: env.catalog.Warn}}
	e.ExternalAgent = func(name string) (engine.Runner, func()) {
		hr := &host.Runner{Engine: e, Agent: name, Version: buildVersion}
		return hr, func() { hr.Close() }
	}
	return e
}

// progress returns a callback drawing a bar on stderr for long work.
func progress(ios *IOStreams, what string) func(done, total int) {
	var bar *progressbar.ProgressBar
	return func(done, total int) {
		if bar == nil {
			bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(ios.ErrOut),
				progressbar.OptionSetDescription(what), progressbar.OptionShowCount(),
				progressbar.OptionClearOnFinish(), progressbar.OptionThrottle(100*time.Millisecond))
		}
		bar.Set(done)
		if done >= total {
			bar.Finish()
		}
	}
}

// find resolves a session reference (id, prefix or title); what names the
// command or flag for the error message.
func (e *sessionsEnv) find(what, ref string) (*session.Meta, error) {
	m, err := session.Find(e.files, ref)
	var amb *session.AmbiguousError
	switch {
	case errors.As(err, &amb):
		return nil, usageErr(fmt.Errorf("%s: %w", what, err), "give more of the id")
	case errors.Is(err, session.ErrNotFound):
		return nil, usageErr(fmt.Errorf("%s: %w", what, err), "see 'openheim sessions ls'")
	case err != nil:
		return nil, failure(fmt.Errorf("%s: %w", what, err))
	}
	return m, nil
}

// sessionJSON is one line of `sessions ls --json`: seed 000's
// ConversationMeta fields plus the message count.
type sessionJSON struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	Model     string    `json:"model"`
	Provider  string    `json:"provider"`
	Cwd       string    `json:"cwd"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	Messages  int       `json:"messages"`
}

func toJSON(s history.Session) sessionJSON {
	return sessionJSON{ID: s.ID, Title: s.Title, Model: s.Model, Provider: s.Provider, Cwd: s.Cwd,
		CreatedAt: s.CreatedAt.UTC(), UpdatedAt: s.UpdatedAt.UTC(), Messages: s.Messages}
}

func newCmdSessionsLs(ios *IOStreams) *cli.Command {
	return &cli.Command{
		Name:  "ls",
		Usage: "list sessions, newest first",
		Description: `Columns: id (first 8 characters), when it was last updated, messages,
model and title. --json prints one object per session with the full id.

Examples:
  openheim sessions ls
  openheim sessions ls --since 7d --cwd ~/src/app
  openheim sessions ls --limit 0 --json | jq -r .title`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "cwd", Usage: "only sessions whose work directory is `DIR`"},
			&cli.StringFlag{Name: "since", Usage: "only sessions updated within `AGE` (e.g. 12h, 7d, 2w) or since a date (2026-01-31)"},
			&cli.IntFlag{Name: "limit", Value: 50, Usage: "show at most `N` sessions (0: all)"},
		}, jsonFlags()...),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if err := noArgs(cmd); err != nil {
				return err
			}
			f := history.Filter{Limit: int(cmd.Int("limit"))}
			if dir := cmd.String("cwd"); dir != "" {
				abs, err := filepath.Abs(dir)
				if err != nil {
					return usageErr(err, "")
				}
				f.Cwd = abs
			}
			if s := cmd.String("since"); s != "" {
				t, err := parseSince(s, time.Now())
				if err != nil {
					return usageErr(fmt.Errorf("--since: %w", err), "")
				}
				f.Since = t
			}
			env, err := openSessions(ios)
			if err != nil {
				return err
			}
			list, err := env.catalog.List(f)
			if err != nil {
				return failure(fmt.Errorf("sessions: %w", err))
			}
			if machineOutput(cmd) {
				for _, s := range list {
					if err := printJSON(ios, cmd, toJSON(s)); err != nil {
						return err
					}
				}
				return nil
			}
			if len(list) == 0 {
				fmt.Fprintln(ios.ErrOut, "No sessions yet. Start one with: openheim prompt \"...\"")
				return nil
			}
			tw := tabwriter.NewWriter(ios.Out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tUPDATED\tMSGS\tMODEL\tTITLE")
			for _, s := range list {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", s.ID[:8], ago(s.UpdatedAt, time.Now()), s.Messages, orDash(s.Model), oneLine(s.Title, 60))
			}
			return tw.Flush()
		},
	}
}

func newCmdSessionsShow(ios *IOStreams) *cli.Command {
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
			_, conv, err := loadRef(ios, cmd)
			if err != nil {
				return err
			}
			if machineOutput(cmd) {
				return printJSON(ios, cmd, conv)
			}
			writeTranscript(ios.Out, conv, false)
			return nil
		},
	}
}

// loadRef loads the session named by the command's one argument.
func loadRef(ios *IOStreams, cmd *cli.Command) (*sessionsEnv, *session.Conversation, error) {
	if cmd.Args().Len() != 1 {
		return nil, nil, usageErr(fmt.Errorf("sessions %s: give one session id, prefix or title", cmd.Name), "see 'openheim sessions ls'")
	}
	env, m, err := findArg(ios, cmd)
	if err != nil {
		return nil, nil, err
	}
	conv, err := env.files.Load(m.ID)
	if err != nil {
		return nil, nil, failure(err)
	}
	return env, conv, nil
}

// findArg opens the sessions and resolves the command's first argument.
func findArg(ios *IOStreams, cmd *cli.Command) (*sessionsEnv, *session.Meta, error) {
	env, err := openSessions(ios)
	if err != nil {
		return nil, nil, err
	}
	m, err := env.find("sessions "+cmd.Name, cmd.Args().First())
	return env, m, err
}

// parseSince accepts an age (Go durations plus d and w units) or a date.
func parseSince(s string, now time.Time) (time.Time, error) {
	if t, err := time.ParseInLocation(time.DateOnly, s, time.Local); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	d, err := parseAge(s)
	if err != nil {
		return time.Time{}, err
	}
	return now.Add(-d), nil
}

// parseAge is time.ParseDuration plus days (d) and weeks (w), as people
// write ages of sessions.
func parseAge(s string) (time.Duration, error) {
	for unit, d := range map[string]time.Duration{"d": 24 * time.Hour, "w": 7 * 24 * time.Hour} {
		if n, ok := strings.CutSuffix(s, unit); ok {
			v, err := strconv.ParseFloat(n, 64)
			if err != nil || v < 0 {
				return 0, fmt.Errorf("%q is not an age like 90d, 2w or 12h", s)
			}
			return time.Duration(v * float64(d)), nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not an age like 90d, 2w or 12h", s)
	}
	return d, nil
}

// ago renders a time as a short age for tables.
func ago(t, now time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	case d < 30*24*time.Hour:
		return fmt.Sprintf("%dd ago", int(d.Hours()/24))
	}
	return t.Local().Format(time.DateOnly)
}
