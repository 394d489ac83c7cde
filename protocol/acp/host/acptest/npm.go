package acptest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// NPMAgent returns the command of an npm-installed ACP agent from
// testdata/acp (name: "codex-acp" or "claude-agent-acp", the names in
// node_modules/.bin), or skips the test when it is not installed, and
// fails it instead when the CI env var is set, because CI installs them.
// Start it with OfflineEnv and in its own process group: both agents
// leave a grandchild behind when only the direct child is signalled
// (PEERS.md).
func NPMAgent(t testing.TB, name string) (command string, args []string) {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, "testdata", "acp", "node_modules", ".bin", name)
	if _, err := os.Stat(bin); err != nil {
		unavailable(t, "%s is not installed (npm ci --prefix testdata/acp): %v", name, err)
	}
	// The bin scripts start with "#!/usr/bin/env node".
	if _, err := exec.LookPath("node"); err != nil {
		unavailable(t, "%s needs node: %v", name, err)
	}
	return bin, []string{}
}

func unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// RepoRoot returns the directory of go.mod, walking up from the working
// directory (a package's directory under go test).
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("acptest: no go.mod above the working directory")
		}
		dir = parent
	}
}

// OfflineEnv returns the environment for a real agent that must not pick
// up the user's credentials or settings: only PATH, TMPDIR, TERM, TZ and
// the locale are kept, and HOME is a fresh empty directory (removed at
// cleanup, best effort: an agent still exiting may be writing to it). An
// allowlist rather than a filter because unrelated variables change the
// agents' behaviour: with IS_SANDBOX set (as on these machines) and
// running as root, claude-agent-acp's session/new fails with -32603 "Query
// closed before response received".
func OfflineEnv(t testing.TB) []string {
	t.Helper()
	home, err := os.MkdirTemp("", "acptest-home-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	env := []string{"HOME=" + home}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "PATH", k == "TMPDIR", k == "TERM", k == "TZ", k == "LANG", strings.HasPrefix(k, "LC_"):
			env = append(env, kv)
		}
	}
	return env
}
