//go:build linux

package confinetest

import (
	"crypto/rand"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// Names in the work directory of a Race.
const (
	// Dir is a directory that is, half the time, a link to the outside
	// folder. It holds secret.txt, edit.txt ("old\n"), victim, r1 and
	// sub/deep.txt; the outside folder holds the same names.
	Dir = "swap"
	// File is a regular file that is, half the time, a FIFO.
	File = "file.txt"
	// OutsideOnly is a name only the outside folder has: listing it is an
	// escape.
	OutsideOnly = "outside-only.txt"
)

// Race is a work directory under attack: Start runs a goroutine that keeps
// exchanging Dir with a link to the Outside folder and File with a FIFO,
// each time atomically (renameat2 RENAME_EXCHANGE), so that every path
// check made before an open can be invalidated before the open.
type Race struct {
	Root    string // the work directory, free of symlinks
	Outside string // what the swapped link points to
	Secret  string // the content of every file outside; reading it is an escape
	Swaps   atomic.Int64

	before map[string]string
}

// NewRace builds the two trees under a fresh temp dir.
func NewRace(tb testing.TB) *Race {
	tb.Helper()
	tmp, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	b := make([]byte, 8)
	rand.Read(b)
	r := &Race{Root: filepath.Join(tmp, "work"), Outside: filepath.Join(tmp, "outside"), Secret: "SECRET-" + hex.EncodeToString(b)}
	files := map[string]string{}
	for _, name := range []string{"secret.txt", "victim", "r1", "sub/deep.txt"} {
		files[filepath.Join(r.Root, Dir, name)] = "inside\n"
		files[filepath.Join(r.Outside, name)] = r.Secret + "\n"
	}
	files[filepath.Join(r.Root, Dir, "edit.txt")] = "old\n"
	files[filepath.Join(r.Outside, "edit.txt")] = "old " + r.Secret + "\n"
	files[filepath.Join(r.Outside, OutsideOnly)] = r.Secret + "\n"
	files[filepath.Join(r.Root, File)] = "plain inside\n"
	for p, c := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	if err := os.Symlink(r.Outside, filepath.Join(r.Root, Dir+".alt")); err != nil {
		tb.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(r.Root, File+".alt"), 0o644); err != nil {
		tb.Fatal(err)
	}
	r.before = r.snapshot(tb)
	return r
}

// Start begins swapping; stop ends it and waits (the test's end does too).
func (r *Race) Start(tb testing.TB) (stop func()) {
	var quit atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		pairs := [][2]string{{Dir, Dir + ".alt"}, {File, File + ".alt"}}
		for !quit.Load() {
			for _, p := range pairs {
				err := unix.Renameat2(unix.AT_FDCWD, filepath.Join(r.Root, p[0]), unix.AT_FDCWD, filepath.Join(r.Root, p[1]), unix.RENAME_EXCHANGE)
				if err != nil {
					tb.Errorf("swap %s: %v", p[0], err)
					return
				}
			}
			r.Swaps.Add(1)
		}
	})
	stop = sync.OnceFunc(func() { quit.Store(true); wg.Wait() })
	// Also stopped before the temp dir goes, should the test end early.
	tb.Cleanup(stop)
	return stop
}

// Leaked reports whether s shows anything of the outside folder.
func (r *Race) Leaked(s string) bool {
	return strings.Contains(s, r.Secret) || strings.Contains(s, OutsideOnly) || strings.Contains(s, "evt-")
}

// CheckOutside fails tb if anything outside was written, created,
// renamed or deleted (names starting with "evt-" excepted: tests create
// those to be watched).
func (r *Race) CheckOutside(tb testing.TB) {
	tb.Helper()
	now := r.snapshot(tb)
	for p, c := range r.before {
		if now[p] != c {
			tb.Errorf("escape: outside %s changed from %q to %q", p, c, now[p])
		}
	}
	for p := range now {
		if _, ok := r.before[p]; !ok {
			tb.Errorf("escape: %s was created outside", p)
		}
	}
}

func (r *Race) snapshot(tb testing.TB) map[string]string {
	tb.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(r.Outside, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), "evt-") {
			return nil
		}
		c := "dir"
		if !d.IsDir() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			c = string(b)
		}
		out[p] = c
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}
