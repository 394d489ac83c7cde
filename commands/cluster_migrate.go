package commands

import (
	"context"
	"fmt"
	"time"

	"github.com/openheim/openheim/runtime/backend"
	"github.com/openheim/openheim/runtime/config"
	"github.com/urfave/cli/v3"
)

// ClusterMigrateOptions is everything `openheim cluster migrate` needs.
type ClusterMigrateOptions struct {
	IO      *IOStreams
	Config  func() (*config.Config, error)
	Home    func() string
	Version string
	To      string // "cluster" or "files"
}

func newCmdClusterMigrate(f *Factory, runF func(context.Context, *ClusterMigrateOptions) error) *cli.Command {
	opts := &ClusterMigrateOptions{IO: f.IOStreams, Config: f.Config, Home: f.Home, Version: f.Version}
	return &cli.Command{
		Name:  "migrate",
		Usage: "copy the sessions, agents, files and settings of the data directory into the cluster, or back",
		Description: `--to cluster copies what $OPENHEIM_HOME keeps (live sessions with all their
messages, uploaded agents, session files, the sessions API's settings) into
the cluster named by [cluster]; --to files copies the cluster's into
$OPENHEIM_HOME. Ids are kept. Nothing is deleted from the source.

It can be interrupted and run again: what the destination already holds is
kept, a session copied in part is completed, and a second run copies nothing.
Every count printed at the end is read back from the destination. A session
whose turn is running is skipped and reported: stop the servers first, or
run it again. Trashed sessions stay behind.

Examples:
  openheim cluster migrate --to cluster
  openheim cluster migrate --to files`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "to", Value: "cluster", Usage: "where to copy: `cluster` or files"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if err := noArgs(cmd); err != nil {
				return err
			}
			opts.To = cmd.String("to")
			return run(ctx, opts, runF, clusterMigrateRun)
		},
	}
}

func clusterMigrateRun(ctx context.Context, opts *ClusterMigrateOptions) error {
	if opts.To != "cluster" && opts.To != "files" {
		return usageErr(fmt.Errorf("cluster migrate: --to %q", opts.To), "use --to cluster or --to files")
	}
	c, err := clusterBackend(ctx, opts.Config, opts.Version)
	if err != nil {
		return err
	}
	defer c.Close()
	warn := func(msg string) { fmt.Fprintf(opts.IO.ErrOut, "openheim: warning: %s\n", msg) }
	files, err := backend.OpenFiles(opts.Home(), warn)
	if err != nil {
		return failure(err)
	}
	var src, dst backend.Backend = files, c
	if opts.To == "files" {
		src, dst = c, files
	}
	mo := backend.MigrateOptions{Warn: warn}
	if opts.IO.ErrTTY {
		mo.Progress = progress(opts.IO, "migrating sessions")
	}
	start := time.Now()
	r, err := backend.Migrate(src, dst, mo)
	fmt.Fprintf(opts.IO.Out, "%s -> %s: %d sessions (%d messages, %d copied or completed now), %d agents, %d files, %d settings, verified in %s\n",
		src.Name(), dst.Name(), r.Sessions, r.Messages, r.Copied, r.Agents, r.Files, r.Settings, time.Since(start).Round(time.Millisecond))
	if err != nil {
		return failure(fmt.Errorf("cluster migrate: %w", err))
	}
	return nil
}
