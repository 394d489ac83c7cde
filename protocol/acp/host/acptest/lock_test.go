package acptest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLockfilePinsTheAgents: testdata/acp's lockfile, which `.ci/run`
// installs with `npm ci`, pins the real agents and what they run: Claude
// Code itself comes in @anthropic-ai/claude-agent-sdk (its cli.js), and
// Codex in the platform package of codex-acp (its native binary; npm
// installs the one for the machine's os and cpu). Each entry has an
// integrity hash, so a fresh machine gets the same bytes.
func TestLockfilePinsTheAgents(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "testdata", "acp", "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	var lock struct {
		LockfileVersion int `json:"lockfileVersion"`
		Packages        map[string]struct {
			Version   string            `json:"version"`
			Integrity string            `json:"integrity"`
			Optional  map[string]string `json:"optionalDependencies"`
			Deps      map[string]string `json:"dependencies"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(data, &lock); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"@zed-industries/claude-agent-acp":    "0.23.",
		"@anthropic-ai/claude-agent-sdk":      "0.2.",
		"@zed-industries/codex-acp":           "0.16.",
		"@zed-industries/codex-acp-linux-x64": "0.16.",
	}
	for name, prefix := range want {
		p, ok := lock.Packages["node_modules/"+name]
		if !ok || !strings.HasPrefix(p.Version, prefix) || !strings.HasPrefix(p.Integrity, "sha512-") {
			t.Errorf("%s: %+v (want version %s* with an integrity hash)", name, p, prefix)
		}
	}
	acp := lock.Packages["node_modules/@zed-industries/claude-agent-acp"]
	if acp.Deps["@anthropic-ai/claude-agent-sdk"] != lock.Packages["node_modules/@anthropic-ai/claude-agent-sdk"].Version {
		t.Errorf("claude-agent-acp depends on claude-agent-sdk %q", acp.Deps["@anthropic-ai/claude-agent-sdk"])
	}
	codex := lock.Packages["node_modules/@zed-industries/codex-acp"]
	for _, platform := range []string{"linux-x64", "linux-arm64", "darwin-arm64", "darwin-x64"} {
		name := "@zed-industries/codex-acp-" + platform
		if codex.Optional[name] != codex.Version || lock.Packages["node_modules/"+name].Integrity == "" {
			t.Errorf("%s is not pinned with codex-acp %s", name, codex.Version)
		}
	}
}
