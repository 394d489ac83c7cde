package sessions

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"
)

func TestSearchTiers(t *testing.T) {
	x, _ := newIndex(t)
	// "config" is everywhere (low idf), "deploy" is rare: a doc repeating
	// "deploy" outscores docs holding both words on raw tf-idf.
	must(t, x.ReplaceSession(sess("some", 4), []string{"deploy deploy deploy deploy deploy"}))
	must(t, x.ReplaceSession(sess("all", 1), []string{"config notes: " + strings.Repeat("lorem ipsum dolor sit amet ", 8) + "later we deploy"}))
	must(t, x.ReplaceSession(sess("phrase", 2), []string{"can you review the deploy config for staging and production and the rest of the long message here"}))
	for i := range 20 {
		must(t, x.ReplaceSession(sess("n"+itoa(i), 0), []string{"config config yaml"}))
	}

	// Guard the test's premise: plain scoring puts "some" above "all".
	res, err := x.b.Search(bleve.NewSearchRequest(matchQuery("deploy config", "text", 0)))
	must(t, err)
	rank := map[string]int{}
	for i, h := range res.Hits {
		id, _, _ := parseDocID(h.ID)
		rank[id] = i
	}
	if rank["some"] > rank["all"] {
		t.Fatalf("premise: raw OR ranking %v does not favour the repeated word", rank)
	}

	hits, err := x.Search("deploy config", 3)
	must(t, err)
	if got, want := hitIDs(hits), []string{"phrase#0", "all#0", "some#0"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Search = %v, want %v", got, want)
	}
	for _, h := range hits {
		if h.Score <= 0 {
			t.Errorf("hit %v has no score", h)
		}
	}
}

func TestSearchGroupsBySession(t *testing.T) {
	x, _ := newIndex(t)
	must(t, x.ReplaceSession(sess("a", 0), []string{
		"kubernetes", "nothing here", "kubernetes pod crash loop", "kubernetes kubernetes pod crash",
	}))
	s := sess("b", 1)
	s.Title = "pod crash"
	must(t, x.ReplaceSession(s, []string{"unrelated"}))
	hits, err := x.Search("pod crash", 10)
	must(t, err)
	// a#2 holds the phrase; b's title holds it too (-1); a appears once.
	got := hitIDs(hits)
	if len(got) != 2 || !contains(got, "b#-1") || !(contains(got, "a#2") || contains(got, "a#3")) {
		t.Errorf("Search = %v", got)
	}
}

func TestSearchPagesPastBusySessions(t *testing.T) {
	x, _ := newIndex(t)
	// 150 strong matches in one session, then a weak one elsewhere: the
	// second session only shows up on a later page of raw hits.
	texts := make([]string, 150)
	for i := range texts {
		texts[i] = "quasar quasar"
	}
	must(t, x.ReplaceSession(sess("busy", 0), texts))
	must(t, x.ReplaceSession(sess("quiet", 0), []string{"a long message that mentions a quasar only once among many other words"}))
	hits, err := x.Search("quasar", 2)
	must(t, err)
	if got := hitIDs(hits); len(got) != 2 || got[1] != "quiet#0" {
		t.Errorf("Search = %v", got)
	}
}

func TestSearchRecencyBreaksTies(t *testing.T) {
	x, _ := newIndex(t)
	for i, id := range []string{"old", "new", "mid"} {
		must(t, x.ReplaceSession(sess(id, []int{1, 3, 2}[i]), []string{"please continue"}))
	}
	hits, err := x.Search("continue", 10)
	must(t, err)
	if got, want := hitIDs(hits), []string{"new#0", "mid#0", "old#0"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Search = %v, want %v", got, want)
	}
	// Ties follow the session doc's current UpdatedAt, whenever the
	// messages were indexed; sessions without a session doc come last.
	must(t, x.AddMessages("orphan", 0, []string{"ok continue"}))
	must(t, x.AddMessages("old", 1, []string{"ok continue"}))
	must(t, x.AddMessages("mid", 1, []string{"ok continue"}))
	hits, err = x.Search("ok continue", 3)
	must(t, err)
	if got, want := hitIDs(hits), []string{"mid#1", "old#1", "orphan#0"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Search = %v, want %v", got, want)
	}
	must(t, x.PutSession(sess("old", 10)))
	hits, err = x.Search("ok continue", 1)
	must(t, err)
	if got, want := hitIDs(hits), []string{"old#1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("after PutSession Search = %v, want %v", got, want)
	}
}

func TestSearchAnalysisAndLimits(t *testing.T) {
	x, _ := newIndex(t)
	for i := range 25 {
		must(t, x.ReplaceSession(sess("s"+itoa(i), i), []string{"Deploying the service"}))
	}
	hits, err := x.Search("deployed", 0) // stemmed to the same term
	must(t, err)
	if len(hits) != DefaultSearchLimit || hits[0].SessionID != "s24" {
		t.Errorf("default limit: %d hits, first %v", len(hits), hitIDs(hits[:1]))
	}
	if hits, _ := x.Search("SERVICE", 3); len(hits) != 3 {
		t.Errorf("limit 3: %v", hitIDs(hits))
	}
	if hits, err := x.Search("the and of", 5); err != nil || len(hits) != 0 {
		t.Errorf("stop words only: %v, %v", hitIDs(hits), err)
	}
	if hits, err := x.Search("nomatchatall", 5); err != nil || len(hits) != 0 {
		t.Errorf("no match: %v, %v", hitIDs(hits), err)
	}
	for _, q := range []string{"", "  \t\n"} {
		if _, err := x.Search(q, 5); !errors.Is(err, ErrEmptyQuery) {
			t.Errorf("Search(%q) err = %v", q, err)
		}
	}
	// Query syntax is not interpreted: these are just words.
	if _, err := x.Search(`+title:"x" OR -(y`, 5); err != nil {
		t.Errorf("odd characters: %v", err)
	}
}

func contains(ss []string, s string) bool {
	for _, v := range ss {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

// Ties spanning several raw pages are all read before choosing the newest.
func TestSearchTiesBeyondOnePage(t *testing.T) {
	x, _ := newIndex(t)
	b := x.b.NewBatch()
	for i := range 300 {
		// Insertion order opposes recency, so raw order would pick oldest.
		must(t, indexSession(b, sess("t"+itoa(i), -i), []string{"please continue"}))
	}
	must(t, x.b.Batch(b))
	hits, err := x.Search("continue", 3)
	must(t, err)
	if got, want := hitIDs(hits), []string{"t0#0", "t1#0", "t2#0"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Search = %v, want %v", got, want)
	}
}
