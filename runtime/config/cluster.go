package config

import (
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/openheim/openheim/runtime/redact"
)

// Cluster is [cluster]: when nats_url is set, every command keeps its
// sessions, leases, files, agents and settings in NATS JetStream instead
// of the data directory, and `serve` becomes one replica of a cluster
// (docs/cluster.md).
type Cluster struct {
	// NATSURL is one or more server URLs, comma separated.
	NATSURL string `toml:"nats_url"`
	// Credentials is a .creds file; Token a plain token (TokenEnv names
	// an environment variable holding it instead).
	Credentials string `toml:"credentials"`
	Token       string `toml:"token"`
	TokenEnv    string `toml:"token_env"`
	// TLS: a CA bundle to trust, and a client certificate and key.
	TLSCA   string `toml:"tls_ca"`
	TLSCert string `toml:"tls_cert"`
	TLSKey  string `toml:"tls_key"`
	// Prefix names the streams, buckets and subjects (default openheim):
	// two deployments can share one NATS account.
	Prefix string `toml:"prefix"`
	// Replicas is how many servers keep each stream and bucket (1-5,
	// default 1; 3 survives the loss of a server).
	Replicas int `toml:"replicas"`
	// LeaseTTLSecs is how long a dead replica's turns keep their
	// sessions (default 10).
	LeaseTTLSecs int `toml:"lease_ttl_secs"`
}

// Enabled reports whether a cluster is configured.
func (c Cluster) Enabled() bool { return c.NATSURL != "" }

// ClusterToken is the token to present: token, else $token_env.
func (c *Config) ClusterToken() string {
	if c.Cluster.Token != "" || c.Cluster.TokenEnv == "" {
		return c.Cluster.Token
	}
	getenv := c.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	return getenv(c.Cluster.TokenEnv)
}

func (c *Config) validateCluster() error {
	cl := &c.Cluster
	if !cl.Enabled() {
		if cl.Credentials != "" || cl.Token != "" || cl.TLSCA != "" || cl.Replicas != 0 {
			return keyErr("cluster.nats_url", "is required when [cluster] sets anything (e.g. nats://127.0.0.1:4222)")
		}
		return nil
	}
	for _, u := range strings.Split(cl.NATSURL, ",") {
		p, err := url.Parse(strings.TrimSpace(u))
		if err != nil || p.Host == "" || !(p.Scheme == "nats" || p.Scheme == "tls" || p.Scheme == "ws" || p.Scheme == "wss") {
			return keyErr("cluster.nats_url", "%q is not a NATS URL (want nats://host:4222 or tls://host:4222, comma separated)", redactURL(u))
		}
	}
	if cl.Replicas == 0 {
		cl.Replicas = 1
	}
	if cl.Replicas < 1 || cl.Replicas > 5 {
		return keyErr("cluster.replicas", "must be 1-5 (got %d)", cl.Replicas)
	}
	if cl.LeaseTTLSecs == 0 {
		cl.LeaseTTLSecs = 10
	}
	if cl.LeaseTTLSecs < 1 {
		return keyErr("cluster.lease_ttl_secs", "must be at least 1 (got %d)", cl.LeaseTTLSecs)
	}
	if cl.Prefix != "" && strings.Trim(cl.Prefix, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") != "" {
		return keyErr("cluster.prefix", "%q may hold only letters, digits, '-' and '_'", cl.Prefix)
	}
	if (cl.TLSCert == "") != (cl.TLSKey == "") {
		return keyErr("cluster.tls_cert", "tls_cert and tls_key go together")
	}
	for _, p := range []*string{&cl.Credentials, &cl.TLSCA, &cl.TLSCert, &cl.TLSKey} {
		if *p != "" {
			*p = resolveAgainst(c.Dir(), *p)
		}
	}
	if cl.Token != "" && cl.TokenEnv != "" {
		return keyErr("cluster.token", "set token or token_env, not both")
	}
	return nil
}

// clusterSecrets are [cluster]'s secret values: the token and the
// URLs' credentials.
func (c *Config) clusterSecrets() []string {
	var out []string
	if t := c.ClusterToken(); t != "" {
		out = append(out, t)
	}
	for _, u := range strings.Split(c.Cluster.NATSURL, ",") {
		out = append(out, redact.URLSecrets(strings.TrimSpace(u))...)
	}
	return out
}

// String keeps the token out of %v.
func (cl Cluster) String() string {
	return fmt.Sprintf("cluster %s (prefix %q, R%d)", redactURL(cl.NATSURL), cl.Prefix, cl.Replicas)
}
