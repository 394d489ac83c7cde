package memory

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// warnings collects Options.Warn messages.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) add(s string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, s)
}

func (w *warnings) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.msgs...)
}

func (w *warnings) count(substr string) int {
	n := 0
	for _, m := range w.all() {
		if strings.Contains(m, substr) {
			n++
		}
	}
	return n
}

// dirs returns a fresh home's memory and index directories.
func dirs(t testing.TB) Options {
	home := t.TempDir()
	return Options{Dir: filepath.Join(home, "memory"), IndexDir: filepath.Join(home, "index", "memory")}
}

// open opens a Memory on opts (Dir and IndexDir from dirs when empty) with
// warnings collected and a clock that ticks a minute per change from a
// fixed date, so recency is deterministic.
func open(t testing.TB, opts Options) (*Memory, *warnings) {
	t.Helper()
	if opts.Dir == "" {
		d := dirs(t)
		opts.Dir, opts.IndexDir = d.Dir, d.IndexDir
	}
	w := &warnings{}
	opts.Warn = w.add
	m, err := Open(opts)
	must(t, err)
	m.now = clock()
	t.Cleanup(func() { _ = m.Close() })
	return m, w
}

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

func clock() func() time.Time {
	var mu sync.Mutex
	t := t0
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Minute)
		return t
	}
}

func add(t testing.TB, m *Memory, contents ...string) []Note {
	t.Helper()
	var out []Note
	for _, c := range contents {
		n, err := m.Add(c)
		must(t, err)
		out = append(out, n)
	}
	return out
}

func search(t testing.TB, m *Memory, q string, k int) ([]int64, string) {
	t.Helper()
	hits, notice, err := m.Search(context.Background(), q, k)
	must(t, err)
	var ids []int64
	for _, h := range hits {
		ids = append(ids, h.ID)
	}
	return ids, notice
}

func logLines(t testing.TB, m *Memory) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(m.opts.Dir, logName))
	must(t, err)
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}
