package commands

import (
	"context"
	"fmt"
	"time"

	"github.com/openheim/openheim/runtime/session"
	"github.com/urfave/cli/v3"
)

// SessionsPruneOptions is everything `openheim sessions prune` needs.
type SessionsPruneOptions struct {
	IO        *IOStreams
	Sessions  func() (*Sessions, error)
	Now       func() time.Time
	OlderThan string // as given, for messages
	Age       time.Duration
	DryRun    bool
	Purge     bool
}

func newCmdSessionsPrune(f *Factory, runF func(context.Context, *SessionsPruneOptions) error) *cli.Command {
	opts := &SessionsPruneOptions{IO: f.IOStreams, Sessions: f.Sessions, Now: time.Now}
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
				return usageErr(fmt.Errorf("sessions prune: --older-than: %w", err), "")
			}
			opts.OlderThan, opts.Age = cmd.String("older-than"), age
			opts.DryRun, opts.Purge = cmd.Bool("dry-run"), cmd.Bool("purge")
			return run(ctx, opts, runF, sessionsPruneRun)
		},
	}
}

func sessionsPruneRun(_ context.Context, opts *SessionsPruneOptions) error {
	s, err := opts.Sessions()
	if err != nil {
		return err
	}
	all, err := s.Files.List()
	if err != nil {
		return failure(err)
	}
	cutoff := opts.Now().Add(-opts.Age)
	var old []*session.Meta
	for i := range all {
		if all[i].UpdatedAt.Before(cutoff) {
			old = append(old, &all[i])
		}
	}
	if opts.DryRun {
		for _, m := range old {
			fmt.Fprintf(opts.IO.Out, "would prune %s %s %s\n", m.ID, m.UpdatedAt.Local().Format(time.DateOnly), deref(m.Title))
		}
		fmt.Fprintf(opts.IO.ErrOut, "%d of %d sessions are older than %s\n", len(old), len(all), opts.OlderThan)
		return nil
	}
	return removeSessions(opts.IO, s, old, opts.Purge, nil)
}

// SessionsReindexOptions is everything `openheim sessions reindex` needs.
type SessionsReindexOptions struct {
	IO       *IOStreams
	Sessions func() (*Sessions, error)
}

func newCmdSessionsReindex(f *Factory, runF func(context.Context, *SessionsReindexOptions) error) *cli.Command {
	opts := &SessionsReindexOptions{IO: f.IOStreams, Sessions: f.Sessions}
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
			return run(ctx, opts, runF, sessionsReindexRun)
		},
	}
}

func sessionsReindexRun(_ context.Context, opts *SessionsReindexOptions) error {
	s, err := opts.Sessions()
	if err != nil {
		return err
	}
	start := time.Now()
	if s.Dir != "" {
		session.SweepSpares(s.Dir) // files left by crashed processes
	}
	n, err := s.Catalog.Reindex()
	if err != nil {
		return failure(fmt.Errorf("sessions reindex: %w", err))
	}
	fmt.Fprintf(opts.IO.Out, "indexed %d sessions in %s\n", n, time.Since(start).Round(time.Millisecond))
	return nil
}
