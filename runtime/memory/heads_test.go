package memory

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestHeadsCache: a new process reads the log from notes.heads on (when it
// matches the log) and still sees exactly the notes: after appends by
// another process, after a compaction, with a damaged cache, and with the
// log restored from an older copy.
func TestHeadsCache(t *testing.T) {
	defer func(v int64) { headsMinLog = v }(headsMinLog)
	headsMinLog = 1
	m, _ := open(t, Options{})
	var want []string
	for i := range 50 {
		want = append(want, fmt.Sprintf("note %d about %s", i, []string{"apples", "pears", "plums"}[i%3]))
	}
	add(t, m, want...)
	must(t, m.Close())
	opts := m.opts
	heads := filepath.Join(opts.Dir, headsName)
	if _, err := os.Stat(heads); err != nil {
		t.Fatalf("no cache written: %v", err)
	}
	logPath := filepath.Join(opts.Dir, logName)
	backup, err := os.ReadFile(logPath)
	must(t, err)

	check := func(what string, wantLen int, resumed bool) *Memory {
		t.Helper()
		m, _ := open(t, opts)
		if got := m.log.resumed > 0; got != resumed {
			t.Errorf("%s: resumed from the cache = %v (at %d, log %d)", what, got, m.log.resumed, m.log.file.size)
		}
		if n, _ := m.Len(); n != wantLen {
			t.Errorf("%s: %d notes, want %d", what, n, wantLen)
		}
		notes, err := m.List()
		must(t, err)
		for _, n := range notes {
			if got, err := m.Get(n.ID); err != nil || got.Content != n.Content {
				t.Errorf("%s: note #%d = %q, %v", what, n.ID, got.Content, err)
			}
		}
		if ids, notice := search(t, m, "plums", 20); len(ids) == 0 || notice != "" {
			t.Errorf("%s: search = %v %q", what, ids, notice)
		}
		return m
	}
	must(t, check("unchanged", 50, true).Close())

	// Another process appends; the cache is behind but still matches.
	other, _ := open(t, opts)
	add(t, other, "a late note about plums")
	must(t, other.Close())
	m2 := check("appended after the cache", 51, true)
	must(t, m2.Close())

	// A damaged cache is ignored.
	valid, err := os.ReadFile(heads)
	must(t, err)
	data := append([]byte(nil), valid...)
	data[len(data)/2] ^= 0xff
	must(t, os.WriteFile(heads, data, 0o600))
	must(t, check("damaged cache", 51, false).Close())

	// Compaction rewrites the log: the cache no longer matches it.
	c, _ := open(t, opts)
	for i := int64(1); i <= 30; i++ {
		must(t, c.Delete(i))
	}
	c.mu.Lock()
	must(t, c.locked(true, c.log.compact))
	c.mu.Unlock()
	must(t, c.Close())
	// The compacting process cached the new log; make the cache describe
	// the old one again, as a stale cache would.
	must(t, os.WriteFile(heads, valid, 0o600))
	must(t, check("compacted", 21, false).Close())

	// The log restored from a backup older than the cache.
	must(t, os.WriteFile(logPath, backup, 0o600))
	must(t, check("log restored", 50, false).Close())
}
