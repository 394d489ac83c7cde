package session

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

func sparesIn(t *testing.T, dir string) []string {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), sparePrefix) {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestReplaceFileReusesInodes: a replacement keeps the file it replaced as
// a spare, empty, and the next replacement writes into it.
func TestReplaceFileReusesInodes(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "meta.json")
	if err := replaceFile(path, []byte("one"), replacement{durable: true, syncParent: true, reuseOld: true}); err != nil {
		t.Fatal(err)
	}
	first := inode(t, path)
	if err := replaceFile(path, []byte("two"), replacement{durable: true, reuseOld: true}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "two" {
		t.Fatalf("content %q", got)
	}
	sp := sparesIn(t, dir)
	if len(sp) != 1 || inode(t, filepath.Join(dir, sp[0])) != first {
		t.Fatalf("spares %v: want the replaced file", sp)
	}
	if fi, _ := os.Stat(filepath.Join(dir, sp[0])); fi.Size() != 0 {
		t.Errorf("a spare keeps %d bytes of old data", fi.Size())
	}
	if err := replaceFile(path, []byte("three"), replacement{reuseOld: true}); err != nil {
		t.Fatal(err)
	}
	if inode(t, path) != first {
		t.Error("the third write did not reuse the spare")
	}
	// Removing keeps the file as a spare too.
	if err := removeFile(path); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("still there: %v", err)
	}
	if len(sparesIn(t, dir)) != 2 {
		t.Errorf("spares after remove: %v", sparesIn(t, dir))
	}
}

// TestReplaceFileConcurrent: writers replacing one file at once never
// corrupt it, readers never see half of it, and no two spares are one
// file. Without reuseOld (meta files, read without a lock) a reader that
// opened the old file keeps reading it intact.
func TestReplaceFileConcurrent(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "meta.json")
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				if err := replaceFile(path, []byte(fmt.Sprintf("writer %d write %d", w, i)), replacement{}); err != nil {
					t.Error(err)
					return
				}
				got, err := os.ReadFile(path)
				if err != nil || !strings.HasPrefix(string(got), "writer ") {
					t.Errorf("read %q %v", got, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	seen := map[uint64]string{inode(t, path): "meta.json"}
	for _, name := range sparesIn(t, dir) {
		ino := inode(t, filepath.Join(dir, name))
		if other, dup := seen[ino]; dup {
			t.Errorf("%s and %s are one file", name, other)
		}
		seen[ino] = name
	}
	if n := len(sparesIn(t, dir)); n > maxSpares {
		t.Errorf("%d spares kept, at most %d", n, maxSpares)
	}
}

func TestSweepSpares(t *testing.T) {
	dir := t.TempDir()
	dead := filepath.Join(dir, sparePrefix+"999999999-1")
	live := filepath.Join(dir, fmt.Sprintf("%s%d-1", sparePrefix, os.Getppid()))
	mine := spareName(dir)
	for _, p := range []string{dead, live, mine, filepath.Join(dir, "keep.json")} {
		os.WriteFile(p, nil, 0o600)
	}
	n, err := SweepSpares(dir)
	if err != nil || n != 1 {
		t.Fatalf("swept %d, %v", n, err)
	}
	for p, want := range map[string]bool{dead: false, live: true, mine: true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s: exists=%v, want %v", filepath.Base(p), err == nil, want)
		}
	}
}
