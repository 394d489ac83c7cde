package rest

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/mcp"
	"github.com/openheim/openheim/runtime/redact/redacttest"
)

// TestMCPServersAndConfigMaskSecrets: with a secret planted in every
// config field, /api/mcp-servers reports the MCP server that failed quoting
// its args, env and every other secret, and shows none of them; nor does
// /api/config.
func TestMCPServersAndConfigMaskSecrets(t *testing.T) {
	f := newFixture(t, redacttest.Config(t.TempDir(), "http://127.0.0.1:9/v1"), false)
	eng := f.srv.Engine
	eng.Config.Getenv = func(k string) string {
		if k == redacttest.EnvVar {
			return redacttest.EnvKey
		}
		return ""
	}
	m := mcp.NewManager(eng.Config.MCPServers, mcp.Options{Version: "test", Redact: eng.Redactor(), Warn: func(string, error) {}})
	defer m.Close()
	m.Start(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m.Wait(ctx)
	f.srv.MCP = m.Status

	servers := f.get(t, "/api/mcp-servers", http.StatusOK)
	if !strings.Contains(servers, `"name":"quoting"`) || !strings.Contains(servers, "<redacted>") {
		t.Fatalf("the failed server is not reported: %s", servers)
	}
	for what, body := range map[string]string{"/api/mcp-servers": servers, "/api/config": f.get(t, "/api/config", http.StatusOK)} {
		if leaks := redacttest.Leaks(body); len(leaks) > 0 {
			t.Errorf("%s shows %v: %s", what, leaks, body)
		}
	}
}
