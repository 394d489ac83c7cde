package confine

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/openheim/openheim/runtime/confine/confinetest"
)

func openTree(tb testing.TB) (*Root, string) {
	tb.Helper()
	root, tmp := confinetest.Tree(tb)
	r, err := Open(root)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { r.Close() })
	return r, tmp
}

func TestOpen(t *testing.T) {
	r, tmp := openTree(t)
	if r.Path() != filepath.Join(tmp, "root") {
		t.Fatalf("Path = %q", r.Path())
	}
	viaLink, err := Open(filepath.Join(tmp, "alias"))
	if err != nil || viaLink.Path() != r.Path() {
		t.Fatalf("Open(alias) = %v, %v; want Path %q", viaLink, err, r.Path())
	}
	if _, err := Open(filepath.Join(tmp, "nope")); err == nil {
		t.Fatal("missing dir accepted")
	}
	_, err = Open(filepath.Join(r.Path(), "a", "b", "file.txt"))
	if err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Fatalf("file as work dir: %v", err)
	}
	cwd, _ := os.Getwd()
	cwd, _ = filepath.EvalSymlinks(cwd)
	if def, err := Open(""); err != nil || def.Path() != cwd {
		t.Fatalf("Open(\"\") = %v, %v; want cwd %q", def, err, cwd)
	}
}

// outsideMsg is the refusal every operation gives, word for word.
func outsideMsg(r *Root, p string) string {
	return "path '" + p + "' is outside the work directory '" + r.Path() + "'"
}

func TestRealAndStat(t *testing.T) {
	r, tmp := openTree(t)
	root := r.Path()
	const outside = "OUTSIDE"
	tests := []struct {
		name, path, want string // want: the real name, relative to the root
	}{
		{"empty is root", "", "."},
		{"dot", ".", "."},
		{"dot dot-slash", "./.", "."},
		{"plain file", "a/b/file.txt", "a/b/file.txt"},
		{"double slash", "a//b", "a/b"},
		{"not yet existing", "new/dir/file.go", "new/dir/file.go"},
		{"dotdot staying inside", "a/../b", "b"},
		{"absolute inside", filepath.Join(root, "a/b"), "a/b"},
		{"absolute via alias of root", filepath.Join(tmp, "alias", "a"), "a"},
		{"relative out and back in by name", "../root/a", "a"},
		{"absolute outside", "/etc/passwd", outside},
		{"dotdot", "..", outside},
		{"dotdot to sibling", "../outside/secret.txt", outside},
		{"dotdot through subdir", "a/../../x", outside},
		{"absolute dotdot", root + "/../outside", outside},
		{"relative link inside", "in_link/b/file.txt", "a/b/file.txt"},
		{"absolute link inside", "abs_in_link/b", "a/b"},
		{"link escaping", "out_link", outside},
		{"file below escaping link", "out_link/secret.txt", outside},
		{"new file below escaping link", "out_link/new.txt", outside},
		{"absolute escaping link", "abs_out_link/x", outside},
		{"dangling link pointing outside", "dangling_out", outside},
		{"dangling absolute link outside", "dangling_abs_out", outside},
		{"dangling link chain outside", "dangling_chain", outside},
		{"dangling link inside", "dangling_in", "a/new.txt"},
		{"nested link escaping", "a/up", outside},
		// The old resolver let a link lead out and a name lead back in;
		// the kernel check judges every step, so this is refused now.
		{"nested escape then back in", "a/up/root/a", outside},
		{"nested link inside", "a/b/upin/b/file.txt", "a/b/file.txt"},
		{"chain inside", "chain", "a"},
		{"chain escaping", "chain_out/secret.txt", outside},
		{"dotdot after missing dir in target", "missing_trick", outside},
		{"below a file", "a/b/file.txt/x", "a/b/file.txt/x"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.Real(tc.path)
			if tc.want == outside {
				want := outsideMsg(r, tc.path)
				if err == nil || err.Error() != want || !errors.Is(err, ErrOutside) {
					t.Fatalf("Real(%q) = %q, %v; want error %q", tc.path, got, err, want)
				}
				// What the kernel cannot even find (a missing directory
				// in a link's target) may say so instead.
				refused := func(err error) bool {
					return err != nil && (err.Error() == want || errors.Is(err, fs.ErrNotExist))
				}
				if fi, err := r.Stat(tc.path); !refused(err) {
					t.Fatalf("Stat(%q) = %v, %v; want error %q", tc.path, fi, err, want)
				}
				if f, _, err := r.Open(tc.path); !refused(err) {
					f.Close()
					t.Fatalf("Open(%q): %v; want error %q", tc.path, err, want)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Real(%q) = %q, %v; want %q", tc.path, got, err, tc.want)
			}
			want, werr := os.Stat(filepath.Join(root, tc.want))
			fi, err := r.Stat(tc.path)
			switch {
			case werr != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
				t.Fatalf("Stat(%q) = %v, %v; want %v", tc.path, fi, err, werr)
			case werr == nil && (err != nil || !os.SameFile(fi, want)):
				t.Fatalf("Stat(%q) = %v, %v; want the file at %s", tc.path, fi, err, tc.want)
			}
		})
	}
}

func TestOddPaths(t *testing.T) {
	r, _ := openTree(t)
	for _, p := range []string{"loop1", "loop1/x"} {
		if _, err := r.Stat(p); err == nil || !strings.Contains(err.Error(), "too many levels of symbolic links") {
			t.Errorf("Stat(%s): %v", p, err)
		}
	}
	if _, err := r.Real("loop1"); err == nil || !strings.Contains(err.Error(), "too many levels of symbolic links") {
		t.Errorf("Real(loop1): %v", err)
	}
	for _, p := range []string{"a\x00b", "\x00"} {
		if _, err := r.Stat(p); err == nil || !strings.Contains(err.Error(), "NUL") {
			t.Errorf("NUL byte: %v", err)
		}
	}
	// Unicode names are names like any other.
	if err := r.WriteFile("ünï/çødé ✓.txt", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if got, err := r.Real("ünï/./çødé ✓.txt"); err != nil || got != "ünï/çødé ✓.txt" {
		t.Errorf("Real(unicode) = %q, %v", got, err)
	}
}

func TestRelAbs(t *testing.T) {
	r, _ := openTree(t)
	for in, want := range map[string]string{
		r.Path():                          ".",
		filepath.Join(r.Path(), "a", "b"): "a/b",
		"/etc/passwd":                     "/etc/passwd",
		filepath.Dir(r.Path()):            filepath.Dir(r.Path()),
	} {
		if got := r.Rel(in); got != want {
			t.Errorf("Rel(%q) = %q, want %q", in, got, want)
		}
	}
	if got := r.Abs("a/b"); got != filepath.Join(r.Path(), "a", "b") {
		t.Errorf("Abs = %q", got)
	}
	if got := r.Abs("."); got != r.Path() {
		t.Errorf("Abs(.) = %q", got)
	}
}

// os keeps the error for a name leading out of a root unexported; at()
// recognises it by its text, which this test pins.
func TestEscapeErrorRecognised(t *testing.T) {
	dir := t.TempDir()
	osr, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer osr.Close()
	os.Symlink("/", filepath.Join(dir, "abs"))
	for _, name := range []string{"../x", "abs/etc"} {
		if _, err := osr.Stat(name); !isEscape(err) {
			t.Errorf("os.Root.Stat(%q) = %v: not recognised as an escape", name, err)
		}
	}
	if isEscape(fs.ErrNotExist) || isEscape(nil) {
		t.Error("ordinary errors taken for escapes")
	}
}
