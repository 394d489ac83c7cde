package llm

import (
	"go/build"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/openheim/openheim"

// TestLeaf: this package imports no client, and the packages that only
// need the API types (tools, the agent loop, MCP tools) reach no client
// either, however deep: a ToolSpec must not drag HTTP clients, vendor wire
// formats or the retry loop into every tool. Imports are read from the
// sources with go/build, so the test needs neither the network nor the go
// command.
func TestLeaf(t *testing.T) {
	root := moduleRoot(t)
	// The leaf may use other packages of the module (message), never one
	// beside it.
	for _, p := range moduleImports(t, root, module+"/runtime/llm", false) {
		if strings.HasPrefix(p, module+"/runtime/llm/") {
			t.Errorf("runtime/llm imports %s: the leaf must not import a client", p)
		}
	}
	for _, pkg := range []string{"runtime/tools", "runtime/agent", "runtime/mcp"} {
		for _, p := range moduleImports(t, root, module+"/"+pkg, true) {
			if strings.HasPrefix(p, module+"/runtime/llm/") {
				t.Errorf("%s depends on %s: it should need only runtime/llm", pkg, p)
			}
		}
	}
}

// TestLeafCheckSeesClients keeps TestLeaf honest: the walk does reach the
// clients from a package that builds them.
func TestLeafCheckSeesClients(t *testing.T) {
	deps := moduleImports(t, moduleRoot(t), module+"/runtime/engine", true)
	for _, want := range []string{"openai", "anthropic", "gemini", "replay", "retry", "transport", "embedding"} {
		i := sort.SearchStrings(deps, module+"/runtime/llm/"+want)
		if i == len(deps) || deps[i] != module+"/runtime/llm/"+want {
			t.Errorf("runtime/engine's dependencies lack runtime/llm/%s: %v", want, deps)
		}
	}
}

// moduleImports lists, sorted, the packages of this module that pkg imports
// (its non-test files for this platform); with deep, also theirs.
func moduleImports(t *testing.T, root, pkg string, deep bool) []string {
	t.Helper()
	seen := map[string]bool{}
	var walk func(p string)
	walk = func(p string) {
		dir := filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(p, module)))
		bp, err := build.ImportDir(dir, 0)
		if err != nil {
			t.Fatalf("reading %s: %v", p, err)
		}
		for _, imp := range bp.Imports {
			if !strings.HasPrefix(imp, module+"/") || seen[imp] {
				continue
			}
			seen[imp] = true
			if deep {
				walk(imp)
			}
		}
	}
	walk(pkg)
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// moduleRoot is the directory holding go.mod, above the test's directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}
