package config

import (
	"os"
	"runtime"
	"strings"
	"testing"
)

// TestAddSecretMakesFilePrivate: adding a server that holds a secret
// leaves the file 0600 (from 0644, and a 0600 file stays so); one without
// keeps the file's mode. The secret is not quoted by a failed add.
func TestAddSecretMakesFilePrivate(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("modes")
	}
	for _, c := range []struct {
		name   string
		from   os.FileMode
		server MCPServer
		want   os.FileMode
	}{
		{"header", 0o644, MCPServer{URL: "https://mcp.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer tok-123456"}}, 0o600},
		{"env", 0o644, MCPServer{Command: "srv", Env: map[string]string{"GITHUB_TOKEN": "ghp_x"}}, 0o600},
		{"url", 0o640, MCPServer{URL: "https://mcp.example.com/mcp?token=tok-123456"}, 0o600},
		{"userinfo", 0o644, MCPServer{URL: "https://me:pw-123456@mcp.example.com/mcp"}, 0o600},
		{"arg", 0o644, MCPServer{Command: "srv", Args: []string{"--api-key", "k-123456"}}, 0o600},
		{"already private", 0o600, MCPServer{Command: "srv", Env: map[string]string{"K": "v"}}, 0o600},
		{"owner read-only bits kept", 0o664, MCPServer{Command: "srv", Env: map[string]string{"K": "v"}}, 0o600},
		{"no secret", 0o644, MCPServer{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/src"}}, 0o644},
	} {
		path := writeConfig(t, "max_iterations = 3\n")
		if err := os.Chmod(path, c.from); err != nil {
			t.Fatal(err)
		}
		if err := AddMCPServer(path, "s", c.server); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if fi, _ := os.Stat(path); fi.Mode().Perm() != c.want {
			t.Errorf("%s: mode %v, want %v", c.name, fi.Mode().Perm(), c.want)
		}
		if got := c.server.HoldsSecret(); got != (c.name != "no secret") {
			t.Errorf("%s: HoldsSecret = %v", c.name, got)
		}
	}
}

func TestAddInvalidSecretNotQuoted(t *testing.T) {
	path := writeConfig(t, "")
	err := AddMCPServer(path, "s", MCPServer{Command: "srv", Env: map[string]string{"TOKEN": "sk-\xff-secret"}})
	if err == nil || strings.Contains(err.Error(), "sk-") {
		t.Fatalf("err = %v", err)
	}
}
