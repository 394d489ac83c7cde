package commands

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/openheim/openheim/runtime/history"
	"github.com/openheim/openheim/runtime/session"
	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v3"
)

func newCmdSessions(f *Factory) *cli.Command {
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
			newCmdSessionsLs(f, nil), newCmdSessionsShow(f, nil), newCmdSessionsSearch(f, nil),
			newCmdSessionsRename(f, nil), newCmdSessionsFork(f, nil), newCmdSessionsExport(f, nil),
			newCmdSessionsRm(f, nil), newCmdSessionsPrune(f, nil), newCmdSessionsReindex(f, nil),
		},
	}
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
func (s *Sessions) find(what, ref string) (*session.Meta, error) {
	m, err := session.Find(s.Files, ref)
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

// load loads the session ref names; what names the command.
func (s *Sessions) load(what, ref string) (*session.Conversation, error) {
	m, err := s.find(what, ref)
	if err != nil {
		return nil, err
	}
	conv, err := s.Files.Load(m.ID)
	if err != nil {
		return nil, failure(err)
	}
	return conv, nil
}

// oneRef is the session reference of a command taking exactly one.
func oneRef(cmd *cli.Command) (string, error) {
	if cmd.Args().Len() != 1 {
		return "", usageErr(fmt.Errorf("sessions %s: give one session id, prefix or title", cmd.Name), "see 'openheim sessions ls'")
	}
	return cmd.Args().First(), nil
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
	// Agent is the external ACP agent that ran the session, "" for
	// openheim's own.
	Agent string `json:"agent"`
}

func toJSON(s history.Session) sessionJSON {
	return sessionJSON{ID: s.ID, Title: s.Title, Model: s.Model, Provider: s.Provider, Cwd: s.Cwd,
		CreatedAt: s.CreatedAt.UTC(), UpdatedAt: s.UpdatedAt.UTC(), Messages: s.Messages, Agent: agentOf(s)}
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
