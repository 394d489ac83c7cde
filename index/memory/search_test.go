package memory

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
)

func docsOf(docs []Doc) func(func(Doc) bool) error {
	return func(yield func(Doc) bool) error {
		for _, d := range docs {
			if !yield(d) {
				return nil
			}
		}
		return nil
	}
}

// note is a test document with its recency (a larger day is newer).
type note struct {
	id   int64
	text string
	day  int64
}

func split(notes []note) ([]Doc, Recency) {
	var docs []Doc
	days := map[int64]int64{}
	for _, n := range notes {
		docs = append(docs, Doc{ID: n.id, Text: n.text})
		days[n.id] = n.day
	}
	return docs, func(id int64) int64 { return days[id] }
}

// rankCases hold for the index (Search) and for the fallback (Scan) alike.
var rankCases = []struct {
	name  string
	docs  []note
	query string
	want  []int64 // the full result, in order
}{
	{
		name: "all words beat some words",
		docs: []note{
			{1, "dark dark dark dark theme everywhere", 3},
			{2, "the user likes a dark editor mode", 1},
			{3, "mode switch", 2},
		},
		query: "dark mode",
		want:  []int64{2, 1, 3},
	},
	{
		name: "phrase beats scattered words",
		docs: []note{
			{1, "coffee in the morning, never black tea", 5},
			{2, "drinks black coffee in the morning", 1},
		},
		query: "black coffee",
		want:  []int64{2, 1},
	},
	{
		name: "recency breaks ties",
		docs: []note{
			{1, "deploys go through staging first", 1},
			{2, "deploys go through staging first", 9},
			{3, "deploys go through staging first", 4},
		},
		query: "staging deploys",
		want:  []int64{2, 3, 1},
	},
	{
		name: "stemming folds preferences and prefer",
		docs: []note{
			{1, "User preferences: tabs, not spaces", 1},
			{2, "She preferred the window seat", 2},
			{3, "unrelated note about lunch", 3},
		},
		query: "what do I prefer",
		want:  []int64{2, 1},
	},
	{
		name:  "stop words only find nothing",
		docs:  []note{{1, "to be or not to be", 1}},
		query: "to be or not",
		want:  nil,
	},
	{
		name:  "case and punctuation do not matter",
		docs:  []note{{1, "Project ZEBRA ships on Fridays.", 1}},
		query: "zebra, friday?",
		want:  []int64{1},
	},
}

func TestSearchRanking(t *testing.T) {
	for _, c := range rankCases {
		t.Run(c.name, func(t *testing.T) {
			docs, newer := split(c.docs)
			dir := filepath.Join(t.TempDir(), "memory")
			must(t, Rebuild(dir, docsOf(docs), len(docs), 1, nil))
			x := openT(t, dir, Options{ReadOnly: true})
			hits, err := x.Search(c.query, 10, newer)
			must(t, err)
			if got := ids(hits); !slices.Equal(got, c.want) {
				t.Errorf("Search(%q) = %v, want %v", c.query, got, c.want)
			}
		})
	}
}

func TestScanRanking(t *testing.T) {
	for _, c := range rankCases {
		t.Run(c.name, func(t *testing.T) {
			docs, newer := split(c.docs)
			if got := ids(Scan(c.query, docs, 10, newer)); !slices.Equal(got, c.want) {
				t.Errorf("Scan(%q) = %v, want %v", c.query, got, c.want)
			}
		})
	}
}

func TestSearchLimit(t *testing.T) {
	var docs []Doc
	for i := range 30 {
		text := "alpha filler"
		if i%3 == 0 {
			text = "alpha beta"
		}
		docs = append(docs, Doc{ID: int64(i + 1), Text: text})
	}
	dir := filepath.Join(t.TempDir(), "memory")
	must(t, Rebuild(dir, docsOf(docs), len(docs), 1, nil))
	x := openT(t, dir, Options{ReadOnly: true})
	for _, limit := range []int{1, 5, 10, 11, 20, 30, 50} {
		hits, err := x.Search("alpha beta", limit, nil) // newer: higher id
		must(t, err)
		if want := min(limit, 30); len(hits) != want {
			t.Errorf("limit %d: %d hits, want %d", limit, len(hits), want)
		}
		// The ten "alpha beta" notes first, newest first; no duplicates.
		got := ids(hits)
		for i, id := range got[:min(len(got), 10)] {
			if want := int64(28 - 3*i); id != want {
				t.Errorf("limit %d: hit %d is #%d, want #%d (%v)", limit, i, id, want, got)
				break
			}
		}
		if s := slices.Compact(slices.Sorted(slices.Values(got))); len(s) != len(got) {
			t.Errorf("limit %d: duplicate hits %v", limit, got)
		}
	}
	if _, err := x.Search("  ", 5, nil); !errors.Is(err, ErrEmptyQuery) {
		t.Errorf("blank query: %v", err)
	}
}

func ids(hits []Hit) []int64 {
	var out []int64
	for _, h := range hits {
		out = append(out, h.ID)
	}
	return out
}

func TestTerms(t *testing.T) {
	terms, _ := Terms("Preferences PREFERRED preferring prefers the")
	if got := fmt.Sprint(terms); got != "[prefer prefer prefer prefer]" {
		t.Errorf("Terms = %s", got)
	}
}

// Ties with the last place are broken by recency even when they run far
// past the first page bleve returns.
func TestSearchManyTies(t *testing.T) {
	var docs []Doc
	for i := range 300 {
		docs = append(docs, Doc{ID: int64(i + 1), Text: "same words extra"})
	}
	docs = append(docs, Doc{ID: 301, Text: "same words"}) // shorter: scores higher
	dir := filepath.Join(t.TempDir(), "memory")
	must(t, Rebuild(dir, docsOf(docs), len(docs), 1, nil))
	x := openT(t, dir, Options{ReadOnly: true})
	oldestFirst := func(id int64) int64 { return -id }
	for _, q := range []string{"words", "same words", "words same"} {
		hits, err := x.Search(q, 4, oldestFirst)
		must(t, err)
		if got := ids(hits); !slices.Equal(got, []int64{301, 1, 2, 3}) {
			t.Errorf("Search(%q) = %v, want [301 1 2 3]", q, got)
		}
	}
}
