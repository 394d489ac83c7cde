package sessions

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/openheim/openheim/index/bleveindex"
)

type stored struct {
	s     Session
	texts []string
}

func source(all []stored, err error) func(yield func(Session, []string) bool) error {
	return func(yield func(Session, []string) bool) error {
		for _, st := range all {
			if !yield(st.s, st.texts) {
				return nil
			}
		}
		return err
	}
}

// corpus has enough message docs to span several rebuild batches.
func corpus(prefix string, n int) []stored {
	var all []stored
	for i := range n {
		texts := make([]string, 20)
		for j := range texts {
			texts[j] = "routine chatter number " + itoa(j)
		}
		texts[7] = prefix + " needle"
		all = append(all, stored{sess(prefix+itoa(i), i), texts})
	}
	return all
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

func TestRebuildFresh(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "idx", "sessions")
	var calls [][2]int
	err := Rebuild(dir, source(corpus("alpha", 60), nil), 60, func(done, total int) {
		calls = append(calls, [2]int{done, total})
	})
	must(t, err)
	if len(calls) != 60 || calls[0] != [2]int{1, 60} || calls[59] != [2]int{60, 60} {
		t.Errorf("progress calls: %d, first %v, last %v", len(calls), calls[0], calls[len(calls)-1])
	}
	x := openT(t, dir, Options{ReadOnly: true})
	if n, _ := x.Count(); n != 60 {
		t.Errorf("Count = %d", n)
	}
	hits, err := x.Search("alpha needle", 100)
	must(t, err)
	if len(hits) != 60 || hits[0].SessionID != "alpha59" || hits[0].Message != 7 {
		t.Errorf("Search: %d hits, first %+v", len(hits), hits[0])
	}
	if got := siblings(t, dir); !reflect.DeepEqual(got, []string{"sessions"}) {
		t.Errorf("left behind: %v", got)
	}
}

func TestRebuildReplacesExisting(t *testing.T) {
	for _, atomic := range []bool{true, false} {
		x, dir := newIndex(t)
		must(t, x.ReplaceSession(sess("old", 0), []string{"old needle"}))
		must(t, x.Close())
		// A reader of the old index keeps working after the swap.
		reader := openT(t, dir, Options{ReadOnly: true})
		if !atomic {
			saved := bleveindex.Exchange
			bleveindex.Exchange = func(a, b string) error { return errors.New("unsupported") }
			t.Cleanup(func() { bleveindex.Exchange = saved })
		}

		must(t, Rebuild(dir, source(corpus("beta", 3), nil), 3, nil))
		y := openT(t, dir, Options{ReadOnly: true})
		got, err := y.List(Filter{})
		must(t, err)
		if want := []string{"beta2", "beta1", "beta0"}; !reflect.DeepEqual(ids(got), want) {
			t.Errorf("atomic=%v: List = %v, want %v", atomic, ids(got), want)
		}
		if old, _ := reader.Search("needle", 5); len(old) != 1 || old[0].SessionID != "old" {
			t.Errorf("atomic=%v: old reader sees %v", atomic, hitIDs(old))
		}
		if got := siblings(t, dir); !reflect.DeepEqual(got, []string{"sessions"}) {
			t.Errorf("atomic=%v: left behind: %v", atomic, got)
		}
	}
}

func TestRebuildFailureKeepsOldIndex(t *testing.T) {
	x, dir := newIndex(t)
	must(t, x.PutSession(sess("old", 0)))
	must(t, x.Close())
	boom := errors.New("store unreadable")
	err := Rebuild(dir, source(corpus("gamma", 30), boom), 30, nil)
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want %v", err, boom)
	}
	err = Rebuild(dir, source([]stored{{Session{}, nil}}, nil), 1, nil)
	if err == nil {
		t.Fatal("empty session id accepted")
	}
	y := openT(t, dir, Options{ReadOnly: true})
	if got, _ := y.List(Filter{}); !reflect.DeepEqual(ids(got), []string{"old"}) {
		t.Errorf("List = %v", ids(got))
	}
	if got := siblings(t, dir); !reflect.DeepEqual(got, []string{"sessions"}) {
		t.Errorf("left behind: %v", got)
	}
}

func TestRebuildBusy(t *testing.T) {
	x, dir := newIndex(t)
	must(t, x.Close())
	h := startHolder(t, "rw", dir)
	built := false
	err := Rebuild(dir, func(yield func(Session, []string) bool) error {
		built = true
		return nil
	}, 0, nil)
	if !errors.Is(err, ErrBusy) || built {
		t.Fatalf("err = %v, built = %v; want ErrBusy before building", err, built)
	}
	h.release()
	must(t, Rebuild(dir, source(nil, nil), 0, nil))
}

func TestRebuildOverDamagedIndex(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions")
	must(t, os.MkdirAll(dir, 0o700))
	must(t, os.WriteFile(filepath.Join(dir, "index_meta.json"), []byte("{not json"), 0o600))
	if _, err := Open(dir, Options{}); err == nil {
		t.Fatal("damaged index opened")
	}
	must(t, Rebuild(dir, source(corpus("delta", 2), nil), 2, nil))
	x := openT(t, dir, Options{})
	if n, _ := x.Count(); n != 2 {
		t.Errorf("Count = %d", n)
	}
}

func TestRebuildRemovesAbandonedScratch(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sessions")
	stale := dir + bleveindex.ScratchSuffix + "123"
	fresh := dir + bleveindex.ScratchSuffix + "456"
	must(t, os.MkdirAll(stale, 0o700))
	must(t, os.MkdirAll(fresh, 0o700))
	old := time.Now().Add(-2 * bleveindex.LeftoverAge)
	must(t, os.Chtimes(stale, old, old))
	must(t, Rebuild(dir, source(nil, nil), 0, nil))
	got := siblings(t, dir)
	if slices.Contains(got, filepath.Base(stale)) || !slices.Contains(got, filepath.Base(fresh)) {
		t.Errorf("siblings = %v", got)
	}
}
