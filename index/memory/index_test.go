package memory

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func openT(t testing.TB, dir string, opts Options) *Index {
	t.Helper()
	x, err := Open(dir, opts)
	must(t, err)
	t.Cleanup(func() { _ = x.Close() })
	return x
}

func TestOpenCreatesThenReopens(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index", "memory")
	x, err := Open(dir, Options{})
	must(t, err)
	if seq, err := x.Seq(); err != nil || seq != 0 {
		t.Fatalf("new index Seq = %d, %v", seq, err)
	}
	must(t, x.Apply([]Doc{{ID: 1, Text: "hello world"}}, nil, 7))
	must(t, x.Close())
	must(t, x.Close()) // twice is harmless

	for _, ro := range []bool{false, true} {
		y, err := Open(dir, Options{ReadOnly: ro})
		must(t, err)
		n, _ := y.Count()
		seq, _ := y.Seq()
		if n != 1 || seq != 7 {
			t.Errorf("ReadOnly=%v: Count %d Seq %d, want 1 and 7", ro, n, seq)
		}
		must(t, y.Close())
	}
}

func TestOpenErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	if _, err := Open(missing, Options{ReadOnly: true}); !errors.Is(err, ErrMissing) {
		t.Errorf("missing: %v, want ErrMissing", err)
	}
	must(t, os.MkdirAll(missing, 0o700)) // an empty dir is just as missing
	if _, err := Open(missing, Options{ReadOnly: true}); !errors.Is(err, ErrMissing) {
		t.Errorf("empty dir: %v, want ErrMissing", err)
	}

	stale := filepath.Join(t.TempDir(), "stale")
	x, err := Open(stale, Options{})
	must(t, err)
	must(t, x.b.SetInternal(schemaKey, []byte("memory/0")))
	must(t, x.Close())
	for _, ro := range []bool{false, true} {
		if _, err := Open(stale, Options{ReadOnly: ro}); !errors.Is(err, ErrStale) {
			t.Errorf("ReadOnly=%v: %v, want ErrStale", ro, err)
		}
	}

	ro := openT(t, missing, Options{})
	must(t, ro.Close())
	ro = openT(t, missing, Options{ReadOnly: true})
	if err := ro.Apply(nil, nil, 1); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Apply on a read-only index: %v", err)
	}
}

// A second Open in the same process conflicts exactly like one from another
// process (bolt's flock is per open file), and gives up after the timeout.
func TestBusy(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "memory")
	openT(t, dir, Options{})
	for _, ro := range []bool{false, true} {
		start := time.Now()
		_, err := Open(dir, Options{ReadOnly: ro, Timeout: 300 * time.Millisecond})
		took := time.Since(start)
		if !errors.Is(err, ErrBusy) {
			t.Fatalf("ReadOnly=%v: %v, want ErrBusy", ro, err)
		}
		if took < 200*time.Millisecond || took > 2*time.Second {
			t.Errorf("ReadOnly=%v: gave up after %v", ro, took)
		}
	}
	if err := Rebuild(dir, docsOf(nil), 0, 0, nil); !errors.Is(err, ErrBusy) {
		t.Errorf("Rebuild beside a writer: %v, want ErrBusy", err)
	}
}

func TestApply(t *testing.T) {
	x := openT(t, filepath.Join(t.TempDir(), "memory"), Options{})
	must(t, x.Apply([]Doc{
		{ID: 1, Text: "one"},
		{ID: 2, Text: "two"},
		{ID: 3, Text: "three"},
	}, nil, 3))
	// Replace 2, delete 1 and 3 (and an id that was never there).
	must(t, x.Apply([]Doc{{ID: 2, Text: "deux"}}, []int64{1, 3, 99}, 6))
	ids, err := x.IDs()
	must(t, err)
	seq, _ := x.Seq()
	if !slices.Equal(ids, []int64{2}) || seq != 6 {
		t.Fatalf("IDs %v Seq %d, want [2] and 6", ids, seq)
	}
	for q, want := range map[string]int{"two": 0, "deux": 1} {
		if hits, _ := x.Search(q, 5, nil); len(hits) != want {
			t.Errorf("Search(%q) = %v, want %d hits", q, hits, want)
		}
	}
	// More puts than one batch holds.
	var many []Doc
	for i := range 1200 {
		many = append(many, Doc{ID: int64(10 + i), Text: "bulk note"})
	}
	must(t, x.Apply(many, nil, 9))
	if n, _ := x.Count(); n != 1201 {
		t.Errorf("Count = %d, want 1201", n)
	}
}

func TestBenchStopWordsAreStopWords(t *testing.T) {
	words := strings.Fields(benchStopWords)
	if terms, _ := Terms(benchStopWords); len(words) != 50 || len(terms) != 0 {
		t.Errorf("%d words; the analyzer keeps %q", len(words), terms)
	}
}
