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

// TestReplaceFileKeepsReaders: a replaced file is never reused, so a
// reader that opened it before the replacement reads it whole, and no
// temporary file is left behind.
func TestReplaceFileKeepsReaders(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.json")
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
	if got, _ := os.ReadFile(path); string(got) != "two" || inode(t, path) == first {
		t.Fatalf("content %q, inode reused: %v", got, inode(t, path) == first)
	}
	if sp := sparesIn(t, dir); len(sp) != 0 {
		t.Fatalf("temporary files left: %v", sp)
	}
}

// TestReplaceFileConcurrent: writers replacing one file at once never
// corrupt it, readers never see half of it, and no temporary file is left.
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
	if sp := sparesIn(t, dir); len(sp) != 0 {
		t.Errorf("temporary files left: %v", sp)
	}
}

func TestSweepSpares(t *testing.T) {
	dir := t.TempDir()
	dead := filepath.Join(dir, sparePrefix+"999999999-1")
	live := filepath.Join(dir, fmt.Sprintf("%s%d-1", sparePrefix, os.Getppid()))
	mine := filepath.Join(dir, fmt.Sprintf("%s%d-1", sparePrefix, os.Getpid()))
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
