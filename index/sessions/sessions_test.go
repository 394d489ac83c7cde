package sessions

import (
	"errors"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func TestOpenCreatesThenReopens(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "sessions")
	x, err := Open(dir, Options{})
	must(t, err)
	must(t, x.PutSession(sess("s1", 0)))
	must(t, x.Close())

	for _, ro := range []bool{false, true} {
		y := openT(t, dir, Options{ReadOnly: ro})
		n, err := y.Count()
		must(t, err)
		if n != 1 {
			t.Errorf("ReadOnly=%v: Count = %d, want 1", ro, n)
		}
		must(t, y.Close())
	}
}

func TestOpenReadOnlyMissing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nope")
	if _, err := Open(dir, Options{ReadOnly: true}); !errors.Is(err, ErrMissing) {
		t.Fatalf("err = %v, want ErrMissing", err)
	}
	// An empty directory (e.g. created by hand) is just as missing.
	must(t, mkdir(dir))
	if _, err := Open(dir, Options{ReadOnly: true}); !errors.Is(err, ErrMissing) {
		t.Fatalf("empty dir: err = %v, want ErrMissing", err)
	}
}

func TestOpenStaleSchema(t *testing.T) {
	x, dir := newIndex(t)
	must(t, x.b.SetInternal(schemaKey, []byte("sessions/0")))
	must(t, x.Close())
	for _, ro := range []bool{false, true} {
		if _, err := Open(dir, Options{ReadOnly: ro}); !errors.Is(err, ErrStale) {
			t.Errorf("ReadOnly=%v: err = %v, want ErrStale", ro, err)
		}
	}
}

func TestReadOnlyRefusesWrites(t *testing.T) {
	x, dir := newIndex(t)
	must(t, x.Close())
	y := openT(t, dir, Options{ReadOnly: true})
	for name, err := range map[string]error{
		"PutSession":     y.PutSession(sess("s1", 0)),
		"AddMessages":    y.AddMessages("s1", 0, []string{"hi"}),
		"DeleteSession":  y.DeleteSession("s1"),
		"ReplaceSession": y.ReplaceSession(sess("s1", 0), nil),
	} {
		if !errors.Is(err, ErrReadOnly) {
			t.Errorf("%s: err = %v, want ErrReadOnly", name, err)
		}
	}
}

func TestPutGetRoundTrip(t *testing.T) {
	x, _ := newIndex(t)
	want := sess("2f1c/odd id", 5)
	must(t, x.PutSession(want))
	got, ok, err := x.Get(want.ID)
	must(t, err)
	if !ok {
		t.Fatal("Get: not found")
	}
	// Times come back exact to the nanosecond, in local time.
	if !got.CreatedAt.Equal(want.CreatedAt) || !got.UpdatedAt.Equal(want.UpdatedAt) {
		t.Errorf("times = %v %v, want %v %v", got.CreatedAt, got.UpdatedAt, want.CreatedAt, want.UpdatedAt)
	}
	got.CreatedAt, got.UpdatedAt = want.CreatedAt, want.UpdatedAt
	if got != want {
		t.Errorf("Get = %+v, want %+v", got, want)
	}
	if _, ok, err := x.Get("other"); ok || err != nil {
		t.Errorf("Get(other) = %v, %v", ok, err)
	}

	// Replace, with zero times and empty strings.
	bare := Session{ID: want.ID, Messages: 7}
	must(t, x.PutSession(bare))
	got, _, err = x.Get(want.ID)
	must(t, err)
	if !reflect.DeepEqual(got, bare) {
		t.Errorf("after replace Get = %+v, want %+v", got, bare)
	}
	if n, _ := x.Count(); n != 1 {
		t.Errorf("Count = %d, want 1", n)
	}
}

func TestList(t *testing.T) {
	x, _ := newIndex(t)
	for i, id := range []string{"a", "b", "c", "d", "e"} {
		s := sess(id, i*10)
		if id == "b" || id == "d" {
			s.Cwd = "/work/b"
		}
		must(t, x.PutSession(s))
	}
	// Messages must never show up as sessions.
	must(t, x.AddMessages("a", 0, []string{"hello", "world"}))
	// Same UpdatedAt as "c": ties resolve by id, so pages stay stable.
	tie := sess("c2", 20)
	must(t, x.PutSession(tie))

	cases := []struct {
		name string
		f    Filter
		want []string
	}{
		{"all", Filter{}, []string{"e", "d", "c", "c2", "b", "a"}},
		{"limit", Filter{Limit: 2}, []string{"e", "d"}},
		{"cwd", Filter{Cwd: "/work/b"}, []string{"d", "b"}},
		{"cwd is exact", Filter{Cwd: "/work"}, nil},
		{"since inclusive", Filter{Since: at(20)}, []string{"e", "d", "c", "c2"}},
		{"since just after", Filter{Since: at(20).Add(time.Nanosecond)}, []string{"e", "d"}},
		{"all filters", Filter{Cwd: "/work/a", Since: at(10), Limit: 2}, []string{"e", "c"}},
	}
	for _, c := range cases {
		got, err := x.List(c.f)
		must(t, err)
		if !reflect.DeepEqual(ids(got), c.want) && !(len(got) == 0 && len(c.want) == 0) {
			t.Errorf("%s: List = %v, want %v", c.name, ids(got), c.want)
		}
	}
	got, _ := x.List(Filter{Limit: 1})
	if len(got) != 1 || got[0].Title != "title of e" || got[0].Model != "gpt-x" || got[0].Messages != 2 {
		t.Errorf("stored fields: %+v", got)
	}
	if n, _ := x.Count(); n != 6 {
		t.Errorf("Count = %d, want 6", n)
	}
}

// List with a Limit narrows to recent windows first; whatever the spread of
// UpdatedAt, it must return exactly the head of the full listing.
func TestListWindowsMatchFullSort(t *testing.T) {
	x, _ := newIndex(t)
	now := time.Now()
	ages := []time.Duration{-time.Hour, 0, time.Hour, 50 * time.Hour, 6 * 24 * time.Hour,
		8 * 24 * time.Hour, 40 * 24 * time.Hour, 100 * 24 * time.Hour, 400 * 24 * time.Hour,
		3000 * 24 * time.Hour, 5000 * 24 * time.Hour, 50000 * 24 * time.Hour}
	b := x.b.NewBatch()
	for i, age := range ages {
		for j := range 3 {
			s := sess("s"+itoa(i)+"-"+itoa(j), 0)
			s.UpdatedAt = now.Add(-age - time.Duration(j)*time.Minute)
			s.Cwd = "/c" + itoa(j%2)
			must(t, b.Index(sessionDocID(s.ID), sessionDoc(s)))
		}
	}
	must(t, x.b.Batch(b))
	for _, f := range []Filter{{}, {Cwd: "/c1"}, {Since: now.Add(-45 * 24 * time.Hour)}} {
		full, err := x.List(f)
		must(t, err)
		for limit := 1; limit <= len(full)+1; limit++ {
			f.Limit = limit
			got, err := x.List(f)
			must(t, err)
			want := full[:min(limit, len(full))]
			if !reflect.DeepEqual(ids(got), ids(want)) {
				t.Fatalf("List(%+v) = %v, want %v", f, ids(got), ids(want))
			}
		}
	}
}

func TestDeleteAndReplace(t *testing.T) {
	x, _ := newIndex(t)
	must(t, x.PutSession(sess("keep", 0)))
	must(t, x.AddMessages("keep", 0, []string{"zebra crossing"}))
	must(t, x.PutSession(sess("gone", 1)))
	// Message docs of "gone" deliberately span several delete pages' worth
	// of ids would be slow; a handful plus a gap in numbering is enough.
	must(t, x.AddMessages("gone", 0, []string{"zebra one", "zebra two"}))
	must(t, x.AddMessages("gone", 5, []string{"zebra five"}))

	must(t, x.DeleteSession("gone"))
	must(t, x.DeleteSession("never-existed"))
	if _, ok, _ := x.Get("gone"); ok {
		t.Error("session doc survived DeleteSession")
	}
	hits, err := x.Search("zebra", 10)
	must(t, err)
	if got := hitIDs(hits); !reflect.DeepEqual(got, []string{"keep#0"}) {
		t.Errorf("after delete Search = %v", got)
	}

	s := sess("keep", 9)
	s.Title = "renamed"
	must(t, x.ReplaceSession(s, []string{"giraffe", "", "zebra again"}))
	got, _, _ := x.Get("keep")
	if got.Title != "renamed" {
		t.Errorf("title = %q", got.Title)
	}
	for q, want := range map[string][]string{
		"zebra":    {"keep#2"},
		"crossing": {},
		"giraffe":  {"keep#0"},
		"renamed":  {"keep#-1"},
	} {
		hits, err := x.Search(q, 10)
		must(t, err)
		if g := hitIDs(hits); !reflect.DeepEqual(g, want) && !(len(g) == 0 && len(want) == 0) {
			t.Errorf("after replace Search(%q) = %v, want %v", q, g, want)
		}
	}
}

func TestAddMessagesBlankRemoves(t *testing.T) {
	x, _ := newIndex(t)
	must(t, x.AddMessages("s", 0, []string{"alpha", "beta"}))
	must(t, x.AddMessages("s", 1, []string{"  "}))
	if hits, _ := x.Search("beta", 5); len(hits) != 0 {
		t.Errorf("blank text kept old message: %v", hitIDs(hits))
	}
	if err := x.AddMessages("s", -1, []string{"x"}); err == nil {
		t.Error("negative first accepted")
	}
	if err := x.AddMessages("", 0, []string{"x"}); err == nil {
		t.Error("empty session id accepted")
	}
}

func TestParseDocID(t *testing.T) {
	for in, want := range map[string]struct {
		id string
		n  int
		ok bool
	}{
		"s/abc": {"abc", -1, true}, "m/abc/3": {"abc", 3, true}, "m/a/b/12": {"a/b", 12, true},
		"s/": {"", -1, false}, "m/abc": {"", 0, false}, "m/abc/x": {"", 0, false}, "x/abc": {"", 0, false},
	} {
		id, n, ok := parseDocID(in)
		if ok != want.ok || (ok && (id != want.id || n != want.n)) {
			t.Errorf("parseDocID(%q) = %q %d %v", in, id, n, ok)
		}
	}
}

// Concurrent first opens race to create the index: every one must end up
// with the same index (waiting its turn for the lock), none with an error.
func TestConcurrentCreate(t *testing.T) {
	for round := range 5 {
		dir := filepath.Join(t.TempDir(), "sessions")
		const n = 4
		errs := make(chan error, n)
		for i := range n {
			go func() {
				x, err := Open(dir, Options{Timeout: 10 * time.Second})
				if err == nil {
					err = x.PutSession(sess("s"+itoa(i), i))
					if cerr := x.Close(); err == nil {
						err = cerr
					}
				}
				errs <- err
			}()
		}
		for range n {
			if err := <-errs; err != nil {
				t.Errorf("round %d: %v", round, err)
			}
		}
		x := openT(t, dir, Options{ReadOnly: true})
		if c, _ := x.Count(); c != n {
			t.Errorf("round %d: Count = %d, want %d", round, c, n)
		}
	}
}
