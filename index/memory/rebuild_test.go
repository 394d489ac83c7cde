package memory

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/openheim/openheim/index/bleveindex"
)

func notes(word string, n int) []Doc {
	docs := make([]Doc, n)
	for i := range docs {
		docs[i] = Doc{ID: int64(i + 1), Text: word + " note"}
	}
	return docs
}

func siblings(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Dir(dir))
	must(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestRebuild(t *testing.T) {
	for _, atomic := range []bool{true, false} {
		dir := filepath.Join(t.TempDir(), "index", "memory")
		if !atomic {
			saved := bleveindex.Exchange
			bleveindex.Exchange = func(a, b string) error { return errors.New("unsupported") }
			t.Cleanup(func() { bleveindex.Exchange = saved })
		}
		// Fresh, spanning several batches, with progress.
		var calls int
		var last [2]int
		must(t, Rebuild(dir, docsOf(notes("alpha", 2500)), 2500, 41, func(done, total int) {
			calls++
			last = [2]int{done, total}
		}))
		if calls != 2500 || last != [2]int{2500, 2500} {
			t.Errorf("progress: %d calls, last %v", calls, last)
		}
		// Replacing an existing index, beside a reader of the old one.
		old := openT(t, dir, Options{ReadOnly: true})
		must(t, Rebuild(dir, docsOf(notes("beta", 10)), 10, 50, nil))
		if hits, _ := old.Search("alpha", 3, nil); len(hits) != 3 {
			t.Errorf("atomic=%v: a reader of the old index lost it: %v", atomic, hits)
		}
		must(t, old.Close())

		x := openT(t, dir, Options{ReadOnly: true})
		n, _ := x.Count()
		seq, _ := x.Seq()
		alpha, _ := x.Search("alpha", 5, nil)
		beta, _ := x.Search("beta", 20, nil)
		if n != 10 || seq != 50 || len(alpha) != 0 || len(beta) != 10 {
			t.Errorf("atomic=%v: Count %d Seq %d alpha %d beta %d", atomic, n, seq, len(alpha), len(beta))
		}
		if got := siblings(t, dir); !slices.Equal(got, []string{"memory"}) {
			t.Errorf("atomic=%v: left behind %v", atomic, got)
		}
	}
}

func TestRebuildReplacesDamagedAndStale(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "memory")
	must(t, os.MkdirAll(dir, 0o700))
	must(t, os.WriteFile(filepath.Join(dir, "index_meta.json"), []byte("{garbage"), 0o600))
	must(t, Rebuild(dir, docsOf(notes("gamma", 3)), 3, 3, nil))
	x := openT(t, dir, Options{ReadOnly: true})
	if n, _ := x.Count(); n != 3 {
		t.Errorf("Count = %d", n)
	}
}

func TestRebuildRemovesOldLeftovers(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "memory")
	oldScratch := dir + bleveindex.ScratchSuffix + "123"
	newScratch := dir + bleveindex.ScratchSuffix + "456"
	must(t, os.MkdirAll(oldScratch, 0o700))
	must(t, os.MkdirAll(newScratch, 0o700))
	past := time.Now().Add(-2 * bleveindex.LeftoverAge)
	must(t, os.Chtimes(oldScratch, past, past))
	must(t, Rebuild(dir, docsOf(nil), 0, 0, nil))
	if got := siblings(t, dir); !slices.Equal(got, []string{"memory", "memory.tmp-456"}) {
		t.Errorf("after rebuild: %v (a recent scratch dir may be a concurrent rebuild's)", got)
	}
}

func TestRebuildReportsSourceErrors(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "memory")
	boom := errors.New("boom")
	err := Rebuild(dir, func(yield func(Doc) bool) error { return boom }, 0, 0, nil)
	if !errors.Is(err, boom) {
		t.Errorf("err = %v", err)
	}
	if err := Rebuild(dir, docsOf([]Doc{{ID: 0, Text: "x"}}), 1, 1, nil); err == nil {
		t.Error("a note without an id was accepted")
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("failed rebuilds left %s: %v", dir, err)
	}
}
