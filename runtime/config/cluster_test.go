package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestClusterConfig(t *testing.T) {
	dir := t.TempDir()
	load := func(body string) (*Config, error) {
		p := filepath.Join(dir, "config.toml")
		os.WriteFile(p, []byte(body), 0o600)
		return LoadWith(p, nil)
	}
	c, err := load("[cluster]\nnats_url = \"nats://a:4222,tls://b:4222\"\ncredentials = \"oh.creds\"\ntoken = \"s3cr3t-token-value\"\n")
	if err != nil {
		t.Fatal(err)
	}
	cl := c.Cluster
	if !cl.Enabled() || cl.Replicas != 1 || cl.LeaseTTLSecs != 10 || cl.Credentials != filepath.Join(dir, "oh.creds") {
		t.Fatalf("defaults: %+v", cl)
	}
	if !slices.Contains(c.Secrets(), "s3cr3t-token-value") || strings.Contains(cl.String(), "s3cr3t") {
		t.Fatal("the token is not treated as a secret")
	}
	c, err = load("[cluster]\nnats_url = \"nats://u:pw-in-url@a:4222\"\ntoken_env = \"OH_NATS\"\n")
	if err != nil {
		t.Fatal(err)
	}
	c.Getenv = func(k string) string { return map[string]string{"OH_NATS": "from-env"}[k] }
	if c.ClusterToken() != "from-env" || !slices.Contains(c.Secrets(), "pw-in-url") {
		t.Fatalf("token_env / url secrets: %q %v", c.ClusterToken(), c.Secrets())
	}
	for body, want := range map[string]string{
		"[cluster]\nreplicas = 3\n":                                              "cluster.nats_url: is required",
		"[cluster]\nnats_url = \"http://a\"\n":                                   "is not a NATS URL",
		"[cluster]\nnats_url = \"nats://a:4222\"\nreplicas = 7\n":                "must be 1-5",
		"[cluster]\nnats_url = \"nats://a:4222\"\nprefix = \"a.b\"\n":            "may hold only letters",
		"[cluster]\nnats_url = \"nats://a:4222\"\ntls_cert = \"c\"\n":            "go together",
		"[cluster]\nnats_url = \"nats://a\"\ntoken = \"x\"\ntoken_env = \"Y\"\n": "not both",
	} {
		if _, err := load(body); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", body, err, want)
		}
	}
}
