package commands

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/openheim/openheim/runtime/backend/jetstream"
	"github.com/openheim/openheim/runtime/config"
	"github.com/urfave/cli/v3"
)

func newCmdCluster(f *Factory) *cli.Command {
	return &cli.Command{
		Name:  "cluster",
		Usage: "inspect the NATS JetStream cluster openheim shares between replicas, and move stores into it and back",
		Description: `With [cluster] in the config, every command keeps its sessions, leases,
files and agents in NATS JetStream, and several "openheim serve" replicas
behind a load balancer serve the same sessions. See docs/cluster.md.

Examples:
  openheim cluster status
  openheim cluster status --json
  openheim cluster migrate --to cluster
  openheim cluster migrate --to files`,
		Commands: []*cli.Command{newCmdClusterStatus(f, nil), newCmdClusterMigrate(f, nil)},
	}
}

// ClusterStatusOptions is everything `openheim cluster status` needs.
type ClusterStatusOptions struct {
	IO      *IOStreams
	Config  func() (*config.Config, error)
	Version string
	Output  jsonOutput
}

func newCmdClusterStatus(f *Factory, runF func(context.Context, *ClusterStatusOptions) error) *cli.Command {
	opts := &ClusterStatusOptions{IO: f.IOStreams, Config: f.Config, Version: f.Version}
	return &cli.Command{
		Name:  "status",
		Usage: "show the connected server, the streams and buckets, the lease holders and the replicas seen",
		Description: `Connects to the cluster named by [cluster] and shows what openheim keeps
there: the server it reached, each stream and bucket with its size, leader
and peers (a peer "behind" is catching up, "offline" is unreachable), the
sessions whose turn lease is held and by which replica, and the replicas
(openheim serve processes) seen in the last minute with their versions.

Examples:
  openheim cluster status
  openheim cluster status --json`,
		Flags: jsonFlags(),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if err := noArgs(cmd); err != nil {
				return err
			}
			opts.Output = jsonOutputOf(cmd)
			return run(ctx, opts, runF, clusterStatusRun)
		},
	}
}

// clusterBackend opens the cluster the config names, or says there is
// none.
func clusterBackend(ctx context.Context, cfgf func() (*config.Config, error), version string) (*jetstream.Backend, error) {
	cfg, err := cfgf()
	if err != nil {
		return nil, err
	}
	if !cfg.Cluster.Enabled() {
		return nil, usageErr(errors.New("cluster: the config has no [cluster] (nats_url)"),
			"add [cluster] with nats_url to the config (docs/cluster.md)")
	}
	b, err := jetstream.Open(ctx, clusterOptions(cfg, version, false, nil))
	if err != nil {
		return nil, &ExitError{Code: ExitFailure, Err: err, Hint: "check [cluster] and that the NATS servers run with JetStream on"}
	}
	return b, nil
}

func clusterStatusRun(ctx context.Context, opts *ClusterStatusOptions) error {
	b, err := clusterBackend(ctx, opts.Config, opts.Version)
	if err != nil {
		return err
	}
	defer b.Close()
	st, err := b.Status()
	if err != nil {
		return failure(fmt.Errorf("cluster status: %w", err))
	}
	if opts.Output.machine() {
		return opts.Output.print(opts.IO, st)
	}
	w := opts.IO.Out
	s := st.Server
	fmt.Fprintf(w, "server     %s (%s, nats-server %s", s.URL, s.Name, s.Version)
	if s.Cluster != "" {
		fmt.Fprintf(w, ", cluster %s", s.Cluster)
	}
	fmt.Fprintf(w, ", rtt %s)\nprefix     %s, R%d, lease TTL %s\n\n", s.RTT, st.Prefix, st.Replicas, st.LeaseTTL)
	fmt.Fprintln(w, "STORE                                 KIND     MESSAGES      BYTES  LEADER  PEERS")
	for _, x := range st.Streams {
		if x.Error != "" {
			fmt.Fprintf(w, "%-37s %-7s  %s\n", x.Name, x.Kind, x.Error)
			continue
		}
		fmt.Fprintf(w, "%-37s %-7s %9d %10d  %-6s  %s\n", x.Name, x.Kind, x.Messages, x.Bytes, x.Leader, strings.Join(x.Peers, ", "))
	}
	fmt.Fprintf(w, "\nleases held: %d\n", len(st.Leases))
	for _, l := range st.Leases {
		fmt.Fprintf(w, "  %s  %s since %s\n", l.Session, l.Replica, l.AcquiredAt.Format(time.RFC3339))
	}
	fmt.Fprintf(w, "\nreplicas seen: %d\n", len(st.Seen))
	for _, r := range st.Seen {
		fmt.Fprintf(w, "  %s  %s pid %d  openheim %s  up since %s, seen %s ago\n", r.Name, r.Host, r.PID, r.Version,
			r.Started.Format(time.RFC3339), time.Since(r.Seen).Round(time.Second))
	}
	return nil
}
