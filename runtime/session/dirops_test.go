//go:build unix

package session

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/openheim/openheim/runtime/atomicfile"
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

// TestReplaceFileReusesInodes: a removed file is kept as a spare, empty,
// and the next replacement writes into it; a replaced file is not reused,
// so a reader that opened it before the replacement reads it whole (leases
// are read without a lock by fences).
func TestReplaceFileReusesInodes(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.lock")
	if err := replaceFile(path, []byte("one"), atomicfile.SyncAll); err != nil {
		t.Fatal(err)
	}
	first := inode(t, path)
	reader, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	if err := replaceFile(path, []byte("two"), atomicfile.SyncFile); err != nil {
		t.Fatal(err)
	}
	if got, _ := io.ReadAll(reader); string(got) != "one" {
		t.Fatalf("a reader of the replaced file read %q", got)
	}
	if got, _ := os.ReadFile(path); string(got) != "two" {
		t.Fatalf("content %q", got)
	}
	if sp := sparesIn(t, dir); len(sp) != 0 {
		t.Fatalf("spares %v: the replaced file was kept", sp)
	}
	second := inode(t, path)
	if err := removeFile(path); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("still there: %v", err)
	}
	sp := sparesIn(t, dir)
	if len(sp) != 1 || inode(t, filepath.Join(dir, sp[0])) != second || second == first {
		t.Fatalf("spares %v: want the removed file", sp)
	}
	if fi, _ := os.Stat(filepath.Join(dir, sp[0])); fi.Size() != 0 {
		t.Errorf("a spare keeps %d bytes of old data", fi.Size())
	}
	if err := replaceFile(path, []byte("three"), atomicfile.SyncNone); err != nil {
		t.Fatal(err)
	}
	if inode(t, path) != second {
		t.Error("the write after the remove did not reuse the spare")
	}
}

// TestReplaceFileConcurrent: writers replacing one file at once never
// corrupt it, readers never see half of it, and no two spares are one
// file.
func TestReplaceFileConcurrent(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "meta.json")
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				if err := replaceFile(path, []byte(fmt.Sprintf("writer %d write %d", w, i)), atomicfile.SyncNone); err != nil {
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
