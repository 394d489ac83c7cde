package confine

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// insideFiles lists what physically sits below root (links as
// themselves), the only things an operation may ever reach.
func insideFiles(tb testing.TB, root string) []fs.FileInfo {
	tb.Helper()
	var out []fs.FileInfo
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		out = append(out, fi)
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

func isInside(fi fs.FileInfo, inside []fs.FileInfo) bool {
	for _, in := range inside {
		if os.SameFile(fi, in) {
			return true
		}
	}
	return false
}

// FuzzConfine throws paths at a Root over a tree of links that stay in,
// lead out, dangle and loop: whatever an operation reaches must be in the
// tree, and a real name must be clean and free of links.
func FuzzConfine(f *testing.F) {
	r, tmp := openTree(f)
	root := r.Path()
	os.WriteFile(filepath.Join(root, "ünï.txt"), []byte("u"), 0o644)
	os.Symlink("/"+strings.TrimPrefix(root, "/")+"/a/../..", filepath.Join(root, "abs_up"))
	inside := insideFiles(f, root)
	secret, err := os.Stat(filepath.Join(tmp, "outside", "secret.txt"))
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		"", ".", "..", "a/../../x", "/etc/passwd", "link/x", "./.", "a//b", "\x00", "a\x00/../..",
		"out_link/secret.txt", "dangling_out", "a/up/outside/secret.txt", "chain/../..", "abs_up/outside",
		"missing_trick/x", root + "/../outside/secret.txt", tmp + "/alias/a/up", tmp + "/alias/out_link/secret.txt",
		"in_link/b/upin/../../up/outside", "ünï.txt", "ünï.txt/..", "abs_in_link/../../outside", "loop1/x",
		strings.Repeat("../", 40) + "etc", strings.Repeat("a/b/upin/", 20) + "b/file.txt",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		check := func(op string, fi fs.FileInfo) {
			if os.SameFile(fi, secret) || !isInside(fi, inside) {
				t.Fatalf("%s(%q) reached %v, which is not in the tree", op, p, fi.Name())
			}
		}
		if fi, err := r.Stat(p); err == nil {
			check("Stat", fi)
		}
		if fi, err := r.Lstat(p); err == nil {
			check("Lstat", fi)
		}
		if file, fi, err := r.Open(p); err == nil {
			check("Open", fi)
			file.Close()
		}
		if d, err := r.OpenDir(p); err == nil {
			fi, err := d.f.Stat()
			if err != nil {
				t.Fatal(err)
			}
			check("OpenDir", fi)
			d.Close()
		}
		name, err := r.Name(p)
		if err == nil && (filepath.IsAbs(name) || filepath.Clean(name) != name || name == ".." || strings.HasPrefix(name, "../")) {
			t.Fatalf("Name(%q) = %q: not a clean name below the root", p, name)
		}
		real, err := r.Real(p)
		if err != nil {
			return
		}
		if filepath.IsAbs(real) || filepath.Clean(real) != real || real == ".." || strings.HasPrefix(real, "../") {
			t.Fatalf("Real(%q) = %q: not a clean name below the root", p, real)
		}
		// No component may be a link, dangling ones included: a caller
		// must be able to name the file without following anything.
		for q := real; q != "."; q = filepath.Dir(q) {
			if fi, err := os.Lstat(filepath.Join(root, q)); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
				t.Fatalf("Real(%q) = %q still goes through link %q", p, real, q)
			}
		}
	})
}
