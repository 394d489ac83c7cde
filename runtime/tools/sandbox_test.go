package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sandboxTree builds root/ and a sibling outside/ under a fresh temp dir,
// with symlinks that stay inside, escape, dangle and nest. It returns the
// sandbox and the symlink-free temp dir.
func sandboxTree(tb testing.TB) (*Sandbox, string) {
	tb.Helper()
	tmp, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	root := filepath.Join(tmp, "root")
	outside := filepath.Join(tmp, "outside")
	for _, d := range []string{filepath.Join(root, "a", "b"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	for p, c := range map[string]string{
		filepath.Join(root, "a", "b", "file.txt"): "inside\n",
		filepath.Join(outside, "secret.txt"):      "secret\n",
	} {
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	links := map[string]string{
		"root/in_link":          "a",
		"root/abs_in_link":      filepath.Join(root, "a"),
		"root/out_link":         "../outside",
		"root/abs_out_link":     outside,
		"root/dangling_out":     "../outside/nope/new.txt",
		"root/dangling_abs_out": "/nonexistent-openheim-dir/x",
		"root/dangling_in":      "a/new.txt",
		"root/a/up":             "../..",
		"root/a/b/upin":         "..",
		"root/chain":            "in_link/b/upin",
		"root/chain_out":        "a/up/outside",
		"root/loop1":            "loop2",
		"root/loop2":            "loop1",
		"root/missing_trick":    "a/missing/../../../outside",
		"root/dangling_chain":   "dangling_out",
		"alias":                 "root",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(tmp, name)); err != nil {
			tb.Fatal(err)
		}
	}
	sb, err := NewSandbox(root)
	if err != nil {
		tb.Fatal(err)
	}
	return sb, tmp
}

func TestNewSandbox(t *testing.T) {
	sb, tmp := sandboxTree(t)
	if sb.Root != filepath.Join(tmp, "root") {
		t.Fatalf("Root = %q", sb.Root)
	}
	viaLink, err := NewSandbox(filepath.Join(tmp, "alias"))
	if err != nil || viaLink.Root != sb.Root {
		t.Fatalf("NewSandbox(alias) = %v, %v; want Root %q", viaLink, err, sb.Root)
	}
	if _, err := NewSandbox(filepath.Join(tmp, "nope")); err == nil {
		t.Fatal("missing dir accepted")
	}
	_, err = NewSandbox(filepath.Join(sb.Root, "a", "b", "file.txt"))
	if err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Fatalf("file as work dir: %v", err)
	}
	cwd, _ := os.Getwd()
	cwd, _ = filepath.EvalSymlinks(cwd)
	if def, err := NewSandbox(""); err != nil || def.Root != cwd {
		t.Fatalf("NewSandbox(\"\") = %v, %v; want cwd %q", def, err, cwd)
	}
}

func TestResolve(t *testing.T) {
	sb, tmp := sandboxTree(t)
	root := sb.Root
	in := func(rel string) string { return filepath.Join(root, rel) }
	const outside = "OUTSIDE"
	tests := []struct {
		name, path, want string
	}{
		{"empty is root", "", root},
		{"dot", ".", root},
		{"dot dot-slash", "./.", root},
		{"plain file", "a/b/file.txt", in("a/b/file.txt")},
		{"double slash", "a//b", in("a/b")},
		{"not yet existing", "new/dir/file.go", in("new/dir/file.go")},
		{"dotdot staying inside", "a/../b", in("b")},
		{"absolute inside", in("a/b"), in("a/b")},
		{"absolute via alias of root", filepath.Join(tmp, "alias", "a"), in("a")},
		{"absolute outside", "/etc/passwd", outside},
		{"dotdot", "..", outside},
		{"dotdot to sibling", "../outside/secret.txt", outside},
		{"dotdot through subdir", "a/../../x", outside},
		{"absolute dotdot", root + "/../outside", outside},
		{"relative link inside", "in_link/b/file.txt", in("a/b/file.txt")},
		{"absolute link inside", "abs_in_link/b", in("a/b")},
		{"link escaping", "out_link", outside},
		{"file below escaping link", "out_link/secret.txt", outside},
		{"new file below escaping link", "out_link/new.txt", outside},
		{"absolute escaping link", "abs_out_link/x", outside},
		{"dangling link pointing outside", "dangling_out", outside},
		{"dangling absolute link outside", "dangling_abs_out", outside},
		{"dangling link chain outside", "dangling_chain", outside},
		{"dangling link inside", "dangling_in", in("a/new.txt")},
		{"nested link escaping", "a/up", outside},
		{"nested escape then back in", "a/up/root/a", in("a")},
		{"nested link inside", "a/b/upin/b/file.txt", in("a/b/file.txt")},
		{"chain inside", "chain", in("a")},
		{"chain escaping", "chain_out/secret.txt", outside},
		{"dotdot after missing dir in target", "missing_trick", outside},
		{"below a file", "a/b/file.txt/x", in("a/b/file.txt/x")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := sb.Resolve(tc.path)
			if tc.want == outside {
				want := "path '" + tc.path + "' is outside the work directory '" + root + "'"
				if err == nil || err.Error() != want {
					t.Fatalf("Resolve(%q) = %q, %v; want error %q", tc.path, got, err, want)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Resolve(%q) = %q, %v; want %q", tc.path, got, err, tc.want)
			}
		})
	}
}

func TestResolveRefusesOddPaths(t *testing.T) {
	sb, _ := sandboxTree(t)
	if _, err := sb.Resolve("loop1"); err == nil || !strings.Contains(err.Error(), "too many levels of symbolic links") {
		t.Errorf("link loop: %v", err)
	}
	if _, err := sb.Resolve("a\x00b"); err == nil || !strings.Contains(err.Error(), "NUL") {
		t.Errorf("NUL byte: %v", err)
	}
}

func TestRel(t *testing.T) {
	sb, _ := sandboxTree(t)
	for in, want := range map[string]string{
		sb.Root:                          ".",
		filepath.Join(sb.Root, "a", "b"): "a/b",
		"/etc/passwd":                    "/etc/passwd",
		filepath.Dir(sb.Root):            filepath.Dir(sb.Root),
	} {
		if got := sb.Rel(in); got != want {
			t.Errorf("Rel(%q) = %q, want %q", in, got, want)
		}
	}
}

// realOf resolves the longest existing prefix of p with EvalSymlinks, the
// independent check FuzzResolve holds Resolve to.
func realOf(p string) string {
	rest := ""
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		if p == filepath.Dir(p) {
			return filepath.Join(p, rest)
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = filepath.Dir(p)
	}
}

func FuzzResolve(f *testing.F) {
	sb, tmp := sandboxTree(f)
	for _, s := range []string{
		"", ".", "..", "a/../../x", "/etc/passwd", "link/x", "./.", "a//b", "\x00",
		"out_link/x", "dangling_out", "a/up/outside/secret.txt", "chain/../..",
		"missing_trick/x", sb.Root + "/../outside", tmp + "/alias/a/up",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		got, err := sb.Resolve(p)
		if err != nil {
			return
		}
		if !filepath.IsAbs(got) || filepath.Clean(got) != got {
			t.Fatalf("Resolve(%q) = %q: not a clean absolute path", p, got)
		}
		if !sb.contains(got) {
			t.Fatalf("Resolve(%q) = %q: outside %q", p, got, sb.Root)
		}
		if real := realOf(got); !sb.contains(real) {
			t.Fatalf("Resolve(%q) = %q really is %q, outside %q", p, got, real, sb.Root)
		}
		// No component may be a symlink, dangling ones included: the
		// caller must not be able to follow a link the check did not.
		for q := got; q != sb.Root && q != filepath.Dir(q); q = filepath.Dir(q) {
			if fi, err := os.Lstat(q); err == nil && fi.Mode()&os.ModeSymlink != 0 {
				t.Fatalf("Resolve(%q) = %q still goes through symlink %q", p, got, q)
			}
		}
	})
}
