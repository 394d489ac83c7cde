package memory

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	memindex "github.com/openheim/openheim/index/memory"
)

func TestNotesLifecycle(t *testing.T) {
	m, _ := open(t, Options{})
	ns := add(t, m, "  likes dark mode  ", "works in Go")
	if ns[0].ID != 1 || ns[1].ID != 2 || ns[0].Content != "likes dark mode" {
		t.Fatalf("added %+v", ns)
	}
	if !ns[0].CreatedAt.Equal(ns[0].UpdatedAt) || !ns[1].CreatedAt.After(ns[0].CreatedAt) {
		t.Errorf("times: %+v", ns)
	}
	got, err := m.Get(1)
	must(t, err)
	if got != ns[0] {
		t.Errorf("Get(1) = %+v, want %+v", got, ns[0])
	}

	ed, err := m.Edit(1, "likes light mode")
	must(t, err)
	if ed.ID != 1 || ed.Content != "likes light mode" || !ed.CreatedAt.Equal(ns[0].CreatedAt) || !ed.UpdatedAt.After(ns[1].UpdatedAt) {
		t.Errorf("Edit = %+v", ed)
	}
	lines := len(logLines(t, m))
	same, err := m.Edit(1, "likes light mode ")
	must(t, err)
	if same != ed || len(logLines(t, m)) != lines {
		t.Errorf("an edit to the same content wrote a record or changed %+v", same)
	}

	list, err := m.List()
	must(t, err)
	if len(list) != 2 || list[0].ID != 1 || list[1].ID != 2 {
		t.Errorf("List (most recently updated first) = %+v", list)
	}

	must(t, m.Delete(2))
	for name, err := range map[string]error{
		"Get":    func() error { _, err := m.Get(2); return err }(),
		"Edit":   func() error { _, err := m.Edit(2, "x"); return err }(),
		"Delete": m.Delete(2),
	} {
		if !errors.Is(err, ErrNotFound) || err.Error() != "no note #2" {
			t.Errorf("%s of a deleted note: %v", name, err)
		}
	}
	// Ids are never reused, not even the highest one just deleted.
	if n := add(t, m, "third"); n[0].ID != 3 {
		t.Errorf("next id = %d, want 3", n[0].ID)
	}
}

func TestContentLimits(t *testing.T) {
	m, _ := open(t, Options{})
	for _, c := range []struct {
		content string
		err     string
	}{
		{"", "note is empty"},
		{" \n\t ", "note is empty"},
		{strings.Repeat("é", 4312), "note is 4312 characters; the limit is 4000"},
		{strings.Repeat("é", 4000), ""}, // characters, not bytes
		{"  " + strings.Repeat("a", 4000) + "\n", ""},
		{"bad \xff byte", "note is not valid UTF-8"},
	} {
		_, err := m.Add(c.content)
		if c.err == "" {
			must(t, err)
			continue
		}
		if err == nil || err.Error() != c.err || !errors.Is(err, ErrInvalidNote) {
			t.Errorf("Add(%.20q…) = %v, want %q", c.content, err, c.err)
		}
		if _, err := m.Edit(1, c.content); err == nil || err.Error() != c.err {
			t.Errorf("Edit(%.20q…) = %v, want %q", c.content, err, c.err)
		}
	}
}

func TestReopen(t *testing.T) {
	m, _ := open(t, Options{})
	add(t, m, "alpha", "beta", "gamma")
	must(t, m.Delete(2))
	_, err := m.Edit(3, "gamma ray")
	must(t, err)
	want, _ := m.List()
	must(t, m.Close())
	must(t, m.Close()) // twice is harmless
	if _, err := m.Get(1); !errors.Is(err, ErrClosed) {
		t.Errorf("Get after Close: %v", err)
	}

	m2, w := open(t, m.opts)
	got, err := m2.List()
	must(t, err)
	if !slices.Equal(got, want) {
		t.Errorf("after reopening: %+v, want %+v", got, want)
	}
	if n := add(t, m2, "delta"); n[0].ID != 4 {
		t.Errorf("next id after reopening = %d", n[0].ID)
	}
	if len(w.all()) != 0 {
		t.Errorf("warnings: %v", w.all())
	}
}

// A crash in the middle of an append leaves a line without its newline:
// Open ignores it with one warning, and the next write cuts it off.
func TestTornTail(t *testing.T) {
	m, _ := open(t, Options{})
	add(t, m, "first note", "second note")
	must(t, m.Close())
	path := filepath.Join(m.opts.Dir, logName)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString(`{"seq":3,"op":"add","id":3,"created_at":"2026-11-30T10:00:00Z","content":"half a no`)
	must(t, err)
	must(t, f.Close())

	m2, w := open(t, m.opts)
	if n, _ := m2.Len(); n != 2 {
		t.Errorf("Len = %d, want 2", n)
	}
	ids, _ := search(t, m2, "note", 5) // more reads: still one warning
	if len(ids) != 2 || w.count("torn record") != 1 {
		t.Errorf("search %v; warnings %q", ids, w.all())
	}
	if n := add(t, m2, "third note"); n[0].ID != 3 {
		t.Errorf("id after a torn record = %d, want 3", n[0].ID)
	}
	for i, l := range logLines(t, m2) {
		if !json.Valid([]byte(l)) {
			t.Errorf("line %d is not JSON after the next write: %q", i+1, l)
		}
	}
	if ids, _ := search(t, m2, "note", 5); len(ids) != 3 {
		t.Errorf("search after the repair = %v", ids)
	}
}

func TestDamagedRecordSkipped(t *testing.T) {
	m, _ := open(t, Options{})
	add(t, m, "one")
	path := filepath.Join(m.opts.Dir, logName)
	data, err := os.ReadFile(path)
	must(t, err)
	// A hand-edited line in another field order still reads; garbage does not.
	hand := `{"content":"by hand","op":"add","id":2,"seq":2}` + "\n"
	must(t, os.WriteFile(path, append(append(data, "garbage\n"...), hand...), 0o600))
	m2, w := open(t, m.opts)
	list, _ := m2.List()
	if len(list) != 2 || list[1].Content != "by hand" || w.count("damaged record") != 1 {
		t.Errorf("List %+v; warnings %q", list, w.all())
	}
}

// appendRaw writes records to the log as a process would that crashed
// before updating the index.
func appendRaw(t *testing.T, m *Memory, recs ...record) {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	must(t, m.locked(true, func() error {
		for i := range recs {
			recs[i].Seq = m.log.lastSeq + 1 + int64(i)
			if recs[i].ID == 0 {
				recs[i].ID = m.log.nextID + int64(i)
			}
		}
		return m.log.write(recs...)
	}))
}

func indexState(t *testing.T, dir string) (seq int64, count int) {
	t.Helper()
	ix, err := memindex.Open(dir, memindex.Options{ReadOnly: true})
	must(t, err)
	defer ix.Close()
	seq, err = ix.Seq()
	must(t, err)
	count, err = ix.Count()
	must(t, err)
	return seq, count
}

func TestIndexCatchesUp(t *testing.T) {
	crash := func(t *testing.T, m *Memory) {
		appendRaw(t, m, record{Op: opAdd, Content: "zebra crossing"}, record{Op: opDelete, ID: 1})
	}
	for _, c := range []struct {
		name    string
		setup   func(t *testing.T, m *Memory)
		want    map[string]int // query -> hits
		rebuilt bool
	}{
		{"crash between log write and index update", crash,
			map[string]int{"zebra": 1, "apple": 0, "banana": 1}, false},
		{"index missing", func(t *testing.T, m *Memory) {
			crash(t, m)
			must(t, os.RemoveAll(m.opts.IndexDir))
		}, map[string]int{"zebra": 1, "apple": 0, "banana": 1}, true},
		{"index damaged", func(t *testing.T, m *Memory) {
			crash(t, m)
			must(t, os.WriteFile(filepath.Join(m.opts.IndexDir, "index_meta.json"), []byte("{"), 0o600))
		}, map[string]int{"zebra": 1, "apple": 0, "banana": 1}, true},
		{"index ahead of the log (log restored from a backup)", func(t *testing.T, m *Memory) {
			path := filepath.Join(m.opts.Dir, logName)
			backup, err := os.ReadFile(path)
			must(t, err)
			add(t, m, "lost in the restore")
			must(t, os.WriteFile(path, backup, 0o600))
		}, map[string]int{"lost": 0, "apple": 1, "banana": 1}, true},
		{"index holds notes a compaction forgot deleting", func(t *testing.T, m *Memory) {
			appendRaw(t, m, record{Op: opDelete, ID: 1})
			m.mu.Lock()
			defer m.mu.Unlock()
			must(t, m.locked(true, m.log.compact))
		}, map[string]int{"apple": 0, "banana": 1}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, _ := open(t, Options{})
			add(t, m, "apple pie", "banana bread")
			c.setup(t, m)
			must(t, m.Close())

			opts := m.opts
			var progress int
			opts.Progress = func(done, total int) { progress++ }
			m2, _ := open(t, opts)
			n, _ := m2.Len()
			// The first use (a search) brings the index in step.
			for q, want := range c.want {
				if ids, notice := search(t, m2, q, 5); len(ids) != want || notice != "" {
					t.Errorf("search %q = %v (%q), want %d hits", q, ids, notice, want)
				}
			}
			if seq, count := indexState(t, opts.IndexDir); seq != m2.log.lastSeq || count != n {
				t.Errorf("index at seq %d with %d notes; log at %d with %d", seq, count, m2.log.lastSeq, n)
			}
			if c.rebuilt != (progress == n) {
				t.Errorf("rebuilt = %v, but progress was reported %d times for %d notes", c.rebuilt, progress, n)
			}
		})
	}
}

func TestCompactionKeepsIDs(t *testing.T) {
	saved := compactMin
	compactMin = 10
	t.Cleanup(func() { compactMin = saved })

	m, _ := open(t, Options{})
	other, _ := open(t, m.opts) // sees the compaction only as a new file
	add(t, m, "one", "two", "three", "four", "five")
	for i := range 12 {
		_, err := m.Edit(2, "two, version "+string(rune('a'+i)))
		must(t, err)
	}
	must(t, m.Delete(5))
	lines := logLines(t, m)
	// 18 changes: compacted to 6 lines (base + 5 notes) by the tenth edit.
	if len(lines) != 9 || !strings.Contains(lines[0], `"op":"base"`) || !strings.Contains(lines[0], `"next_id":6`) {
		t.Fatalf("after compaction the log has %d lines, first %s", len(lines), lines[0])
	}
	if n := add(t, m, "six"); n[0].ID != 6 {
		t.Errorf("id after compaction = %d, want 6 (5 was deleted, never reused)", n[0].ID)
	}
	for _, mm := range []*Memory{m, other} {
		list, err := mm.List()
		must(t, err)
		var ids []int64
		for _, n := range list {
			ids = append(ids, n.ID)
		}
		slices.Sort(ids)
		two, _ := mm.Get(2)
		if !slices.Equal(ids, []int64{1, 2, 3, 4, 6}) || two.Content != "two, version l" {
			t.Errorf("ids %v, #2 %q", ids, two.Content)
		}
		if got, _ := search(t, mm, "version", 5); !slices.Equal(got, []int64{2}) {
			t.Errorf("search after compaction = %v", got)
		}
	}
	leftovers, _ := filepath.Glob(filepath.Join(m.opts.Dir, "*.tmp-*"))
	if len(leftovers) != 0 {
		t.Errorf("left behind: %v", leftovers)
	}
}
