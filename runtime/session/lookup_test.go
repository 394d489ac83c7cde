package session

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestFind(t *testing.T) {
	s, _ := newStore(t)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	add := func(id, title string, age int) Meta {
		m := NewMeta(base)
		m.ID, m.Title, m.UpdatedAt = id, Str(title), base.Add(-time.Duration(age)*time.Hour)
		if err := s.Create(m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	a := add("aaaa1111-0000-4000-8000-000000000001", "fix the build", 0)
	b := add("aaaa2222-0000-4000-8000-000000000002", "dup", 1)
	c := add("bbbb3333-0000-4000-8000-000000000003", "dup", 2)
	d := add("cccc4444-0000-4000-8000-000000000004", "bbbb", 3)
	// A title that is also another session's prefix: the prefix wins.
	e := add("dddd5555-0000-4000-8000-000000000005", "cccc", 4)

	cases := []struct {
		ref       string
		want      string
		ambiguous []string
		notFound  bool
	}{
		{ref: a.ID, want: a.ID},
		{ref: "aaaa1", want: a.ID},
		{ref: "aaaa1111-0000", want: a.ID},
		{ref: "bbbb", want: c.ID},
		{ref: "cccc", want: d.ID},
		{ref: "fix the build", want: a.ID},
		{ref: "dddd5555-0000-4000-8000-000000000005", want: e.ID},
		{ref: "aaaa", ambiguous: []string{a.ID, b.ID}},
		{ref: "dup", ambiguous: []string{b.ID, c.ID}},
		{ref: "aaa", notFound: true}, // too short for a prefix
		{ref: "Fix the build", notFound: true},
		{ref: "eeee6666-0000-4000-8000-000000000006", notFound: true},
		{ref: "", notFound: true},
	}
	for _, tc := range cases {
		t.Run(tc.ref, func(t *testing.T) {
			m, err := Find(s, tc.ref)
			var amb *AmbiguousError
			switch {
			case tc.notFound:
				if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), fmt.Sprintf("%q", tc.ref)) {
					t.Fatalf("want not found, got %v %v", m, err)
				}
			case tc.ambiguous != nil:
				if !errors.As(err, &amb) || len(amb.Candidates) != len(tc.ambiguous) {
					t.Fatalf("want ambiguous, got %v %v", m, err)
				}
				for i, id := range tc.ambiguous {
					if amb.Candidates[i].ID != id || !strings.Contains(err.Error(), id[:8]+" ") {
						t.Errorf("candidate %d: %s in %q", i, id, err)
					}
				}
			default:
				if err != nil || m.ID != tc.want {
					t.Fatalf("got %v %v, want %s", m, err, tc.want)
				}
			}
		})
	}
}

func TestAmbiguousErrorListsFive(t *testing.T) {
	var cands []Meta
	for i := range 7 {
		m := NewMeta(time.Now())
		if i > 0 {
			m.Title = Str(fmt.Sprint("t", i))
		}
		cands = append(cands, m)
	}
	msg := (&AmbiguousError{Ref: "x", Candidates: cands}).Error()
	lines := strings.Split(msg, "\n")
	if len(lines) != 7 || !strings.Contains(lines[0], "7 sessions") ||
		lines[1] != "  "+cands[0].ID[:8]+" (untitled)" || lines[2] != "  "+cands[1].ID[:8]+" t1" ||
		!strings.Contains(lines[6], "2 more") {
		t.Fatalf("message:\n%s", msg)
	}
}
