package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// entries lists dir's names, temporaries included.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func wantContent(t *testing.T, path, want string) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil || string(got) != want {
		t.Fatalf("%s = %q, %v; want %q", path, got, err, want)
	}
}

func TestWriteCreatesAndReplaces(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.json")
	if err := Write(path, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	wantContent(t, path, "one")
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("two"), 0o640); err != nil {
		t.Fatal(err)
	}
	wantContent(t, path, "two")
	if fi, _ := os.Stat(path); runtime.GOOS != "windows" && fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want the writer's 0640", fi.Mode().Perm())
	}
	if got := entries(t, dir); len(got) != 1 {
		t.Errorf("left in the directory: %q", got)
	}
	if err := (Writer{}).Write(filepath.Join(dir, "private"), nil); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(filepath.Join(dir, "private")); runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("zero Writer's mode %v, want 0600", fi.Mode().Perm())
	}
}

// TestWriteFailuresKeepTheOld: a failing fill or check leaves the file as
// it was and no temporary behind.
func TestWriteFailuresKeepTheOld(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	if err := Write(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := Writer{}.WriteFrom(path, func(w io.Writer) error {
		io.WriteString(w, "half")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("fill error: %v", err)
	}
	var checked string
	err = Writer{Check: func(tmp string) error {
		b, _ := os.ReadFile(tmp)
		checked = string(b)
		return boom
	}}.Write(path, []byte("new"))
	if !errors.Is(err, boom) || checked != "new" {
		t.Fatalf("check error %v, checked %q", err, checked)
	}
	wantContent(t, path, "old")
	if got := entries(t, dir); len(got) != 1 {
		t.Errorf("left in the directory: %q", got)
	}
}

func TestWriteNoReplace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "token")
	w := Writer{NoReplace: true}
	if err := w.Write(path, []byte("first")); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(path, []byte("second")); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second create: %v, want fs.ErrExist", err)
	}
	wantContent(t, path, "first")
	if got := entries(t, dir); len(got) != 1 {
		t.Errorf("left in the directory: %q", got)
	}
}

// TestWriteHooks: a caller's temporary files and entry ordering are used.
func TestWriteHooks(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "meta.json")
	var opened, changes int
	w := Writer{
		Sync: SyncNone,
		Temp: func(d string) (*os.File, error) {
			opened++
			return os.OpenFile(filepath.Join(d, fmt.Sprint(".spare-", opened)), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		},
		InDir: func(change func() error) error { changes++; return change() },
	}
	if err := w.Write(path, []byte("x")); err != nil {
		t.Fatal(err)
	}
	wantContent(t, path, "x")
	if opened != 1 || changes != 1 {
		t.Errorf("Temp called %d times, InDir %d; want 1 and 1 (the rename)", opened, changes)
	}
}

func TestRemoveTemps(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "notes.jsonl")
	for _, n := range []string{"notes.jsonl", ".notes.jsonl.tmp-123", ".notes.jsonl.tmp-", ".other.tmp-1", "notes.jsonl.tmp-9"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o600)
	}
	RemoveTemps(path)
	if got := strings.Join(entries(t, dir), ","); got != ".other.tmp-1,notes.jsonl,notes.jsonl.tmp-9" {
		t.Errorf("after RemoveTemps: %s", got)
	}
}

// TestWriteReadersSeeWholeFiles: readers racing writers only ever read a
// complete version.
func TestWriteReadersSeeWholeFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	versions := []string{strings.Repeat("a", 64<<10), strings.Repeat("b", 1<<10)}
	if err := Write(path, []byte(versions[0]), 0o600); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := (Writer{Sync: SyncNone}).Write(path, []byte(versions[i%2])); err != nil {
				t.Error(err)
				return
			}
		}
	})
	for range 500 {
		b, err := os.ReadFile(path)
		if err != nil || (string(b) != versions[0] && string(b) != versions[1]) {
			t.Errorf("read %d bytes, %v: not a whole version", len(b), err)
			break
		}
	}
	close(stop)
	wg.Wait()
}
