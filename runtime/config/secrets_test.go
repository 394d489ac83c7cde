package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openheim/openheim/runtime/redact"
	"github.com/openheim/openheim/runtime/redact/redacttest"
)

// TestSecretsCoverEveryField: the redactor of a config with a secret
// planted in every secret-bearing field masks each of them.
func TestSecretsCoverEveryField(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	os.WriteFile(path, []byte(redacttest.Config(dir, "http://127.0.0.1:9/v1")), 0o600)
	cfg, err := LoadWith(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Getenv = func(k string) string {
		if k == redacttest.EnvVar {
			return redacttest.EnvKey
		}
		return ""
	}
	r := cfg.Redactor()
	got := r.String(redacttest.Known())
	if leaks := redacttest.Leaks(got); len(leaks) > 0 {
		t.Fatalf("not masked: %v in %q", leaks, got)
	}
	// Settings next to them are left alone.
	for _, keep := range []string{"--verbose", "2024-06-01", "failing-mcp", "m1", "/bin/true", "embed-model"} {
		if r.String(keep) != keep {
			t.Errorf("%q masked", keep)
		}
	}
}

func TestNoSecretsNoRedactor(t *testing.T) {
	cfg := &Config{Providers: map[string]*Provider{"local": {Kind: KindOpenAICompatible, APIBase: "http://localhost:11434/v1"}},
		MCPServers: map[string]*MCPServer{"fs": {Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/home/me/src"}, Env: map[string]string{"LOG": "debug"}}},
		Getenv:     func(string) string { return "" }}
	if r := cfg.Redactor(); r != nil {
		t.Fatalf("a config without secrets must give a nil Redactor, got one masking %q", r.String("/home/me/src debug npx"))
	}
}

func TestAPIBaseWithQueryLoads(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	os.WriteFile(path, []byte(`[providers.gw]
kind = "openai_compatible"
api_base = "https://gw.example.com/v1/?token=tok-1234567"
default_model = "m"
`), 0o600)
	cfg, err := LoadWith(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Public().Providers["gw"].APIBase; strings.Contains(got, "tok-") {
		t.Errorf("public api_base %q", got)
	}
	if got := cfg.Redactor().String("GET /v1/chat/completions?token=tok-1234567"); got != "GET /v1/chat/completions?token="+redact.Marker {
		t.Errorf("masked: %q", got)
	}
}
