package acp

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestLayering holds the split of DESIGN.md §1: the wire types know
// neither side of a connection nor the engine, and the agent side and the
// host side know nothing of each other, directly or through another
// package, in their code or their tests. What the two sides share goes
// down into this package (wire types, conversions) or into the runtime.
func TestLayering(t *testing.T) {
	const mod = "github.com/openheim/openheim/"
	types, agent, host := mod+"protocol/acp", mod+"protocol/acp/agent", mod+"protocol/acp/host"
	forbidden := map[string][]string{
		types: {agent, host, mod + "runtime/engine"},
		agent: {host},
		host:  {agent},
	}
	for pkg, bad := range forbidden {
		deps := goListDeps(t, pkg)
		if !deps[pkg] || len(deps) < 2 {
			t.Fatalf("go list -deps %s listed %d packages, not the package and its imports", pkg, len(deps))
		}
		for _, b := range bad {
			if deps[b] {
				t.Errorf("%s imports %s (directly or through another package)", pkg, b)
			}
		}
	}
}

// goListDeps is every package pkg and its tests import, transitively, by
// import path. It stays offline: only the module cache is read.
func goListDeps(t *testing.T, pkg string) map[string]bool {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-test", "-f", "{{.ImportPath}}", pkg)
	cmd.Env = append(os.Environ(), "GOPROXY=off")
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("go list %s: %v\n%s", pkg, err, stderr)
	}
	deps := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		// "path [pkg.test]" is path as compiled for pkg's tests.
		path, _, _ := strings.Cut(line, " ")
		deps[path] = true
	}
	return deps
}
