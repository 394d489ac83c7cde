package memory

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
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

// TestNoteTableOverBase: a table started from the cache's records answers
// like one filled record by record, through changes of every kind.
func TestNoteTableOverBase(t *testing.T) {
	var base []byte
	filled := newNoteTable(0)
	for _, id := range []int64{1, 2, 5, 9} {
		e := entry{rev: id * 10, off: id * 100, n: int(id)}
		filled.put(id, e)
		base = binary.LittleEndian.AppendUint64(base, uint64(id))
		base = binary.LittleEndian.AppendUint64(base, uint64(e.rev))
		base = binary.LittleEndian.AppendUint64(base, uint64(e.off))
		base = binary.LittleEndian.AppendUint32(base, uint32(e.n))
	}
	over := withBase(base, nil)
	for _, tb := range []*noteTable{&filled, &over} {
		tb.del(2)                               // a deletion of a cached note
		tb.put(5, entry{rev: 99, off: 7, n: 3}) // an edit
		tb.put(12, entry{rev: 100, off: 8, n: 4})
		tb.del(12)
		tb.put(13, entry{rev: 101, off: 9, n: 5})
		tb.del(40) // unknown: nothing
	}
	got := func(tb *noteTable) map[int64]entry {
		m := map[int64]entry{}
		for id, e := range tb.all() {
			m[id] = e
		}
		return m
	}
	want := got(&filled)
	if g := got(&over); !reflect.DeepEqual(g, want) || over.len() != filled.len() || over.len() != 4 {
		t.Fatalf("over base %v (len %d), filled %v (len %d)", g, over.len(), want, filled.len())
	}
	for _, id := range []int64{1, 2, 5, 9, 12, 13, 40} {
		e1, ok1 := over.get(id)
		e2, ok2 := filled.get(id)
		if e1 != e2 || ok1 != ok2 || over.rev(id) != filled.rev(id) {
			t.Errorf("get(%d): over base %v %v, filled %v %v", id, e1, ok1, e2, ok2)
		}
	}
}

// TestHeadsMappingReleased: the mapping of notes.heads a table was built on
// is released when the log is re-read from scratch and when the memory
// closes, once each; a table that never had one releases nothing.
func TestHeadsMappingReleased(t *testing.T) {
	calls := 0
	l := noteLog{}
	l.notes = withBase(make([]byte, headsRecord), func() { calls++ })
	l.reset(0)
	if calls != 1 || l.notes.base != nil {
		t.Fatalf("after reset: %d releases, base %v", calls, l.notes.base)
	}
	l.reset(0) // the fresh table has nothing to release
	l.notes = withBase(make([]byte, headsRecord), func() { calls++ })
	l.notes.release()
	l.notes.release()
	if calls != 2 {
		t.Fatalf("releases: %d, want 2", calls)
	}
}
