package commands

import (
	"context"
	"path/filepath"
	"time"

	"github.com/openheim/openheim/runtime/backend"
	"github.com/openheim/openheim/runtime/backend/jetstream"
	"github.com/openheim/openheim/runtime/config"
)

// openBackend opens the stores cfg names: a cluster's when it has
// [cluster] (announce lists this process in cluster status: serve), else
// the files under home. No connection is made without [cluster].
func openBackend(ctx context.Context, cfg *config.Config, home, version string, announce bool, warn func(string)) (backend.Backend, error) {
	if !cfg.Cluster.Enabled() {
		b, err := backend.OpenFiles(home, warn)
		if err != nil {
			return nil, failure(err)
		}
		return b, nil
	}
	b, err := jetstream.Open(ctx, clusterOptions(cfg, version, announce, warn))
	if err != nil {
		return nil, &ExitError{Code: ExitFailure, Err: err,
			Hint: "check [cluster] in the config and that the NATS servers run with JetStream on (docs/cluster.md)"}
	}
	return b, nil
}

func clusterOptions(cfg *config.Config, version string, announce bool, warn func(string)) jetstream.Options {
	cl := cfg.Cluster
	return jetstream.Options{URL: cl.NATSURL, Credentials: cl.Credentials, Token: cfg.ClusterToken(),
		CAFile: cl.TLSCA, CertFile: cl.TLSCert, KeyFile: cl.TLSKey, Prefix: cl.Prefix, Replicas: cl.Replicas,
		LeaseTTL: time.Duration(cl.LeaseTTLSecs) * time.Second, Version: version, Announce: announce, Warn: warn}
}

// indexDir is where this machine keeps its index of the backend's
// sessions: a cluster's apart from the local files'.
func indexDir(home string, cfg *config.Config, name string) string {
	if !cfg.Cluster.Enabled() {
		return filepath.Join(home, "index", name)
	}
	prefix := cfg.Cluster.Prefix
	if prefix == "" {
		prefix = jetstream.DefaultPrefix
	}
	return filepath.Join(home, "index", "cluster-"+prefix, name)
}
