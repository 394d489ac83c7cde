package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestKeywordRanking(t *testing.T) {
	for _, c := range []struct {
		name  string
		notes []string // added in this order: later is newer
		query string
		want  []int64
	}{
		{"all words beat some words",
			[]string{"the user prefers dark mode in every editor", "dark dark dark dark chocolate", "mode of transport: bicycle"},
			"dark mode", []int64{1, 2, 3}},
		{"phrase beats scattered words",
			[]string{"coffee in the morning, never black tea", "drinks black coffee in the morning"},
			"black coffee", []int64{2, 1}},
		{"recency breaks ties",
			[]string{"deploys go through staging first", "deploys go through staging first", "deploys go through staging first"},
			"staging deploys", []int64{3, 2, 1}},
		{"stemming: preferences finds prefer",
			[]string{"I prefer tabs over spaces", "lunch is at noon", "she preferred the aisle seat"},
			"preferences", []int64{3, 1}}, // equal scores: newer first
		{"stemming: prefer finds preferences",
			[]string{"User preferences: terse answers", "nothing here"},
			"what do I prefer?", []int64{1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, _ := open(t, Options{})
			add(t, m, c.notes...)
			if got, notice := search(t, m, c.query, 10); !slices.Equal(got, c.want) || notice != "" {
				t.Errorf("search %q = %v (%q), want %v", c.query, got, notice, c.want)
			}
		})
	}
}

func TestTopK(t *testing.T) {
	for _, c := range []struct {
		optsTopK, topK, want int
	}{
		{0, 0, 5},    // config default
		{3, 0, 3},    // memory.top_k
		{3, 7, 7},    // the caller's wins
		{3, -1, 3},   // nonsense means default
		{30, 0, 20},  // clamped to MaxTopK
		{3, 500, 20}, // clamped to MaxTopK
		{-4, 0, 5},
	} {
		m, _ := open(t, Options{TopK: c.optsTopK})
		if got := m.TopK(c.topK); got != c.want {
			t.Errorf("TopK(%d) with Options.TopK %d = %d, want %d", c.topK, c.optsTopK, got, c.want)
		}
	}

	m, _ := open(t, Options{TopK: 3})
	for i := range 30 {
		add(t, m, fmt.Sprintf("fact number %d about llamas", i))
	}
	for k, want := range map[int]int{0: 3, 1: 1, 25: 20, 100: 20} {
		if got, _ := search(t, m, "llamas", k); len(got) != want {
			t.Errorf("Search topK %d: %d hits, want %d", k, len(got), want)
		}
	}
}

func TestSearchErrors(t *testing.T) {
	m, _ := open(t, Options{})
	add(t, m, "a note")
	if _, _, err := m.Search(context.Background(), "  ", 5); err == nil || !strings.Contains(err.Error(), "empty query") {
		t.Errorf("blank query: %v", err)
	}
	if got, notice := search(t, m, "the of and", 5); len(got) != 0 || notice != "" {
		t.Errorf("stop words only: %v %q", got, notice)
	}
}
