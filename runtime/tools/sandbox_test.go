package tools

import (
	"path/filepath"
	"testing"

	"github.com/openheim/openheim/runtime/confine"
	"github.com/openheim/openheim/runtime/confine/confinetest"
)

// rootTree opens the shared tree of inside, escaping, dangling and looping
// links (see confinetest.Tree) as a root. It returns the root and the
// symlink-free temp dir holding it and the outside folder.
func rootTree(tb testing.TB) (*confine.Root, string) {
	tb.Helper()
	dir, tmp := confinetest.Tree(tb)
	r, err := confine.Open(dir)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { r.Close() })
	return r, tmp
}

// The Sandbox left for the ACP host's terminals places a directory inside
// the root and refuses one outside, through the root.
func TestSandboxResolve(t *testing.T) {
	r, tmp := rootTree(t)
	sb, err := NewSandbox(filepath.Join(tmp, "alias"))
	if err != nil || sb.Root != r.Path() {
		t.Fatalf("NewSandbox(alias) = %v, %v; want Root %q", sb, err, r.Path())
	}
	for p, want := range map[string]string{"": r.Path(), "in_link/b": filepath.Join(r.Path(), "a", "b"), "abs_in_link": filepath.Join(r.Path(), "a")} {
		if got, err := sb.Resolve(p); err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", p, got, err, want)
		}
	}
	for _, p := range []string{"..", "out_link", "a/up", "/etc"} {
		want := "path '" + p + "' is outside the work directory '" + r.Path() + "'"
		if got, err := sb.Resolve(p); err == nil || err.Error() != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", p, got, err, want)
		}
	}
	if _, err := NewSandbox(filepath.Join(tmp, "nope")); err == nil {
		t.Error("missing dir accepted")
	}
}
