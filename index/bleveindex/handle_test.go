package bleveindex

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2/mapping"
)

var testSchema = Schema{Mapping: func() *mapping.IndexMappingImpl {
	im := LeanMapping()
	doc := StaticDoc()
	doc.AddFieldMappingsAt("text", TextField(false))
	im.DefaultMapping = doc
	return im
}, Key: []byte("test.schema"), Version: "test/1"}

// TestHandle: a writer's handle creates the index and indexes through the
// promoted bleve methods; a reader's says ReadOnly; closing twice is
// harmless (scorch alone would panic).
func TestHandle(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ix")
	w, err := OpenHandle(dir, Options{}, testSchema, "test index")
	if err != nil {
		t.Fatal(err)
	}
	if w.ReadOnly {
		t.Error("a writer's handle says ReadOnly")
	}
	if err := w.Index("1", map[string]any{"text": "hello"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	r, err := OpenHandle(dir, Options{ReadOnly: true}, testSchema, "test index")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if n, err := r.DocCount(); err != nil || n != 1 || !r.ReadOnly {
		t.Fatalf("reader: %d docs, %v, ReadOnly %v", n, err, r.ReadOnly)
	}
	if _, err := OpenHandle(filepath.Join(t.TempDir(), "none"), Options{ReadOnly: true}, testSchema, "test index"); !errors.Is(err, ErrMissing) {
		t.Fatalf("missing: %v", err)
	}
}

// TestFeed: progress after each item; add's error stops the source and
// comes back as is; the source's own error comes back named.
func TestFeed(t *testing.T) {
	items := func(fail error) func(yield func(int) bool) error {
		return func(yield func(int) bool) error {
			for i := 1; i <= 5; i++ {
				if !yield(i) {
					return nil
				}
			}
			return fail
		}
	}
	var seen []int
	var done []int
	progress := func(d, total int) {
		if total != 5 {
			t.Errorf("total %d", total)
		}
		done = append(done, d)
	}
	add := func(i int) error { seen = append(seen, i); return nil }
	if err := Feed(items(nil), add, 5, progress, "reading"); err != nil || len(seen) != 5 || len(done) != 5 || done[4] != 5 {
		t.Fatalf("err %v, seen %v, progress %v", err, seen, done)
	}
	bad := errors.New("bad item")
	seen, done = nil, nil
	err := Feed(items(nil), func(i int) error {
		if i == 3 {
			return bad
		}
		return add(i)
	}, 5, progress, "reading")
	if err != bad || len(seen) != 2 || len(done) != 2 {
		t.Fatalf("add failing: err %v, seen %v, progress %v", err, seen, done)
	}
	broken := errors.New("disk gone")
	err = Feed(items(broken), add, 5, nil, "test index: rebuild: reading notes")
	if !errors.Is(err, broken) || !strings.HasPrefix(err.Error(), "test index: rebuild: reading notes: ") {
		t.Fatalf("source failing: %v", err)
	}
}
