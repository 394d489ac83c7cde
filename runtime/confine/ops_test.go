package confine

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readAll(t *testing.T, r *Root, p string) (string, error) {
	t.Helper()
	f, fi, err := r.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if fi.IsDir() {
		return "", errors.New("is a directory")
	}
	b, err := io.ReadAll(f)
	return string(b), err
}

func fileContent(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestLinksInsideWorkOutsideRefused(t *testing.T) {
	r, tmp := openTree(t)
	for _, p := range []string{"in_link/b/file.txt", "abs_in_link/b/file.txt", "chain/b/file.txt", "a/b/upin/b/file.txt", filepath.Join(tmp, "alias", "a", "b", "file.txt")} {
		if got, err := readAll(t, r, p); err != nil || got != "inside\n" {
			t.Errorf("read %s = %q, %v", p, got, err)
		}
	}
	for _, p := range []string{"out_link/secret.txt", "abs_out_link/secret.txt", "a/up/outside/secret.txt", "chain_out/secret.txt"} {
		if got, err := readAll(t, r, p); !errors.Is(err, ErrOutside) {
			t.Errorf("read %s = %q, %v; want refused", p, got, err)
		}
		if d, err := r.OpenDir(filepath.Dir(p)); !errors.Is(err, ErrOutside) {
			if d != nil {
				d.Close()
			}
			t.Errorf("OpenDir %s: %v; want refused", filepath.Dir(p), err)
		}
	}
}

// A hard link is the file itself, under a second name: inside the tree it
// is read like any file (the old sandbox did the same; it cannot be told
// apart from a file that simply has two names). A write replaces the name
// inside with a new file, so the other name keeps its content.
func TestHardLinkToOutside(t *testing.T) {
	r, tmp := openTree(t)
	outside := filepath.Join(tmp, "outside", "secret.txt")
	if err := os.Link(outside, filepath.Join(r.Path(), "hard")); err != nil {
		t.Fatal(err)
	}
	if got, err := readAll(t, r, "hard"); err != nil || got != "secret\n" {
		t.Fatalf("read hard link = %q, %v", got, err)
	}
	if err := r.WriteFile("hard", []byte("replaced")); err != nil {
		t.Fatal(err)
	}
	if got := fileContent(t, outside); got != "secret\n" {
		t.Fatalf("write through a hard link changed the outside name: %q", got)
	}
	if got := fileContent(t, filepath.Join(r.Path(), "hard")); got != "replaced" {
		t.Fatalf("inside name holds %q", got)
	}
}

func TestWriteFile(t *testing.T) {
	r, tmp := openTree(t)
	root := r.Path()
	if err := r.WriteFile("new/dir/f.txt", []byte("one")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(root, "new/dir/f.txt")); err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("new file: %v %v", fi, err)
	}
	p := filepath.Join(root, "run.sh")
	os.WriteFile(p, []byte("old"), 0o700)
	if err := r.WriteFile(p, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o700 || fileContent(t, p) != "new" {
		t.Fatalf("rewrite: mode %v content %q", fi.Mode().Perm(), fileContent(t, p))
	}
	// A link inside is followed and kept; a dangling one creates its target.
	os.Symlink("run.sh", filepath.Join(root, "run_link"))
	if err := r.WriteFile("run_link", []byte("via link")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(filepath.Join(root, "run_link")); err != nil || fi.Mode()&fs.ModeSymlink == 0 || fileContent(t, p) != "via link" {
		t.Fatalf("link replaced or target not written: %v %v", fi, err)
	}
	if err := r.WriteFile("dangling_in", []byte("d")); err != nil || fileContent(t, filepath.Join(root, "a/new.txt")) != "d" {
		t.Fatalf("dangling inside link: %v", err)
	}
	if err := r.WriteFile("abs_in_link/abs.txt", []byte("x")); err != nil {
		t.Fatalf("through an absolute inside link: %v", err)
	}
	for _, p := range []string{"out_link/x", "abs_out_link/x", "dangling_out", "dangling_abs_out", "dangling_chain", "a/up/outside/x", "../x"} {
		if err := r.WriteFile(p, []byte("pwned")); err == nil || err.Error() != outsideMsg(r, p) {
			t.Errorf("WriteFile(%s) = %v", p, err)
		}
	}
	for _, p := range []string{"", "a", "in_link"} {
		if err := r.WriteFile(p, []byte("x")); err == nil || !strings.Contains(err.Error(), "is a directory") {
			t.Errorf("WriteFile(%q) = %v", p, err)
		}
	}
	os.WriteFile(filepath.Join(root, "plain"), nil, 0o644)
	var pe *ParentError
	if err := r.WriteFile("plain/f.txt", nil); !errors.As(err, &pe) || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("parent is a file: %v", err)
	}
	des, _ := os.ReadDir(filepath.Join(tmp, "outside"))
	if len(des) != 1 {
		t.Errorf("outside holds %d entries", len(des))
	}
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".tmp-") {
			t.Errorf("temp file left: %s", path)
		}
		return nil
	})
}

func TestEntryOperations(t *testing.T) {
	r, tmp := openTree(t)
	root := r.Path()
	secret := filepath.Join(tmp, "outside", "secret.txt")

	// Links are removed and renamed themselves, never their targets.
	if err := r.Rename("out_link", "renamed_out"); err != nil {
		t.Fatal(err)
	}
	if _, err := readAll(t, r, "renamed_out/secret.txt"); !errors.Is(err, ErrOutside) {
		t.Fatalf("renamed link leads out: %v", err)
	}
	if err := r.Remove("renamed_out"); err != nil {
		t.Fatal(err)
	}
	if err := r.RemoveAll("abs_out_link"); err != nil {
		t.Fatal(err)
	}
	if fileContent(t, secret) != "secret\n" {
		t.Fatal("target touched")
	}
	// A relative link moved to where it points out stays refused: the
	// move is fine, following it is not.
	os.Symlink("../../outside", filepath.Join(root, "a", "b", "rel"))
	if got, err := readAll(t, r, "a/b/rel/x"); err == nil {
		t.Fatalf("read through a/b/rel: %q", got)
	}
	if err := r.Rename("a/b/rel", "rel"); err != nil {
		t.Fatal(err)
	}
	if got, err := readAll(t, r, "rel/secret.txt"); !errors.Is(err, ErrOutside) {
		t.Fatalf("moved link read %q, %v", got, err)
	}
	// Both ends are confined.
	for _, tc := range [][2]string{{"../outside/secret.txt", "x"}, {"a/b/file.txt", "../stolen"}, {"a/b/file.txt", "chain_out/stolen"}, {"chain_out/secret.txt", "x"}} {
		if err := r.Rename(tc[0], tc[1]); !errors.Is(err, ErrOutside) {
			t.Errorf("Rename(%s, %s) = %v", tc[0], tc[1], err)
		}
	}
	for _, p := range []string{"../outside/secret.txt", "chain_out/secret.txt", "a/up/outside"} {
		if err := r.RemoveAll(p); !errors.Is(err, ErrOutside) {
			t.Errorf("RemoveAll(%s) = %v", p, err)
		}
		if err := r.MkdirAll(p+"/new", 0o755); !errors.Is(err, ErrOutside) {
			t.Errorf("MkdirAll(%s/new) = %v", p, err)
		}
		if f, err := r.Create(p + "x"); !errors.Is(err, ErrOutside) {
			if f != nil {
				f.Close()
			}
			t.Errorf("Create(%sx) = %v", p, err)
		}
	}
	if fileContent(t, secret) != "secret\n" {
		t.Fatal("outside file changed")
	}
	if des, _ := os.ReadDir(filepath.Join(tmp, "outside")); len(des) != 1 {
		t.Fatalf("outside holds %d entries", len(des))
	}
	// MkdirAll through an inside link, and onto a file.
	if err := r.MkdirAll("in_link/made/here", 0o755); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(root, "a/made/here")); err != nil || !fi.IsDir() {
		t.Fatalf("made: %v", err)
	}
	if err := r.MkdirAll("a/b/file.txt", 0o755); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("MkdirAll onto a file: %v", err)
	}
	f, err := r.Create("a/created")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := r.Create("a/created"); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Create over an existing file: %v", err)
	}
}

func TestDirWalk(t *testing.T) {
	r, _ := openTree(t)
	root := r.Path()
	os.WriteFile(filepath.Join(root, "a", "z.txt"), nil, 0o644)
	d, err := r.OpenDir("in_link") // a link to a names the directory it reaches
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var seen []string
	if err := d.Walk(func(name string, fi fs.FileInfo) error {
		seen = append(seen, name)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Links are listed, never entered (upin points back up).
	want := "in_link/b in_link/b/file.txt in_link/b/upin in_link/up in_link/z.txt"
	if got := strings.Join(seen, " "); got != want {
		t.Fatalf("walk = %s\nwant   %s", got, want)
	}
	if _, err := d.Sub("up"); err == nil {
		t.Fatal("Sub entered a link")
	}
	for _, bad := range []string{"..", "b/file.txt", "", "."} {
		if _, _, err := d.Open(bad); err == nil {
			t.Errorf("Dir.Open(%q) accepted", bad)
		}
	}
	// A directory replaced after it was listed is not entered.
	fi, _ := d.Lstat("b")
	os.Rename(filepath.Join(root, "a", "b"), filepath.Join(root, "a", "b.old"))
	os.Mkdir(filepath.Join(root, "a", "b"), 0o755)
	if _, err := d.sub("b", fi); !errors.Is(err, errChanged) {
		t.Fatalf("swapped directory: %v", err)
	}
}

// Entries describe what is in the open directory even after its path was
// taken by another directory (a link to the outside, say).
func TestDirEntriesThroughHandle(t *testing.T) {
	r, tmp := openTree(t)
	root := r.Path()
	os.WriteFile(filepath.Join(root, "a", "b", "big"), make([]byte, 100), 0o644)
	os.WriteFile(filepath.Join(tmp, "outside", "big"), make([]byte, 7), 0o644)
	d, err := r.OpenDir("a/b")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	os.Rename(filepath.Join(root, "a", "b"), filepath.Join(root, "a", "moved"))
	os.Symlink(filepath.Join(tmp, "outside"), filepath.Join(root, "a", "b"))
	ents, err := d.Entries()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() == "secret.txt" {
			t.Fatal("listed the outside folder")
		}
		if e.Name() == "big" {
			if fi, err := e.Info(); err != nil || fi.Size() != 100 {
				t.Fatalf("Info of big = %v, %v; want the 100 bytes inside", fi, err)
			}
		}
	}
	if f, _, err := d.Open("big"); err != nil {
		t.Fatal(err)
	} else {
		fi, _ := f.Stat()
		f.Close()
		if fi.Size() != 100 {
			t.Fatalf("opened the outside file (%d bytes)", fi.Size())
		}
	}
}
