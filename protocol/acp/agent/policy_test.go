package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openheim/openheim/protocol/jsonrpc"
)

// TestSessionPolicy: a cwd must be a root or below one after symlinks;
// client MCP servers only when allowed; no policy (stdio) allows both.
func TestSessionPolicy(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	other := filepath.Join(base, "other")
	for _, d := range []string{filepath.Join(root, "sub"), other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.Symlink(other, filepath.Join(root, "out"))
	os.Symlink(filepath.Join(root, "sub"), filepath.Join(other, "in"))
	servers := []json.RawMessage{json.RawMessage(`{"name":"x","command":"true"}`)}
	p := &SessionPolicy{Roots: []string{root, filepath.Join(base, "missing")}}
	for cwd, want := range map[string]string{
		root:                             "",
		filepath.Join(root, "sub"):       "",
		filepath.Join(other, "in"):       "", // a link from outside to inside
		filepath.Join(root, "out"):       "is outside the directories",
		other:                            "is outside the directories",
		root + "-sibling":                "is not a directory",
		"/":                              "is outside the directories",
		filepath.Join(root, "sub", ".."): "",
		"root/sub":                       "is not an absolute path",
	} {
		err := p.check(cwd, nil)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(errData(err), want)) {
			t.Errorf("check(%q) = %v, want %q", cwd, err, want)
		}
	}
	if err := p.check(root, servers); err == nil || !strings.Contains(errData(err), "allow_client_mcp_servers") {
		t.Errorf("client MCP servers: %v", err)
	}
	if err := (&SessionPolicy{Roots: []string{root}, ClientMCPServers: true}).check(root, servers); err != nil {
		t.Errorf("allowed client MCP servers: %v", err)
	}
	var none *SessionPolicy // stdio: the editor is the user
	if err := none.check("/", servers); err != nil {
		t.Errorf("no policy: %v", err)
	}
}

func errData(err error) string {
	if e, ok := err.(*jsonrpc.Error); ok && e.Code == jsonrpc.InvalidParams {
		s, _ := e.Data.(string)
		return s
	}
	return "not -32602: " + err.Error()
}
