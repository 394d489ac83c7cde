package rest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
)

// storePaged stores n sessions a minute apart, the newest last, half of
// them in /a and half in /b, and returns their ids newest first.
func storePaged(t *testing.T, f *fixture, n int) []string {
	t.Helper()
	base := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	ids := make([]string, n)
	for i := range n {
		m := session.NewMeta(base.Add(time.Duration(i) * time.Minute))
		m.Title = session.Str(fmt.Sprintf("session %d", i))
		m.Cwd = session.Str([]string{"/a", "/b"}[i%2])
		if err := f.srv.Engine.Store.Create(m); err != nil {
			t.Fatal(err)
		}
		ids[n-1-i] = m.ID
	}
	return ids
}

// TestSessionsListPages pages through the list with ?offset= and ?limit=,
// through the index and from the store alone: the pages join up to the
// whole list, in order, without a gap or a repeat.
func TestSessionsListPages(t *testing.T) {
	for _, withCatalog := range []bool{false, true} {
		t.Run(fmt.Sprintf("catalog=%v", withCatalog), func(t *testing.T) {
			f := newFixture(t, seedConfig, withCatalog)
			all := storePaged(t, f, 23)
			var paged []string
			for off := 0; off < 30; off += 5 {
				page := listIDs(t, f, fmt.Sprintf("/api/sessions?limit=5&offset=%d", off))
				if want := min(5, max(len(all)-off, 0)); len(page) != want {
					t.Fatalf("offset %d: %d sessions, want %d", off, len(page), want)
				}
				paged = append(paged, page...)
			}
			if !slices.Equal(paged, all) {
				t.Errorf("the pages joined:\n%v\nthe whole list:\n%v", paged, all)
			}
			// offset alone skips; offset=0 is the whole list; past the end is [].
			if got := listIDs(t, f, "/api/sessions?offset=20"); !slices.Equal(got, all[20:]) {
				t.Errorf("?offset=20: %v, want %v", got, all[20:])
			}
			if got := listIDs(t, f, "/api/sessions?offset=0"); !slices.Equal(got, all) {
				t.Errorf("?offset=0: %v", got)
			}
			if got := f.get(t, "/api/sessions?offset=99&limit=5", http.StatusOK); got != "[]\n" {
				t.Errorf("past the end: %q", got)
			}
			// With cwd, the offset counts that directory's sessions only.
			var inA []string
			for i, id := range all {
				if i%2 == 0 { // all[0] is the newest, i = 22, in /a
					inA = append(inA, id)
				}
			}
			if got := listIDs(t, f, "/api/sessions?cwd=/a&limit=3&offset=3"); !slices.Equal(got, inA[3:6]) {
				t.Errorf("cwd=/a page 2: %v, want %v", got, inA[3:6])
			}
			// A huge limit and offset do not overflow into "everything".
			if got := listIDs(t, f, "/api/sessions?limit=9223372036854775807&offset=9223372036854775807"); len(got) != 0 {
				t.Errorf("max offset: %v", got)
			}
			for _, q := range []string{"offset=-1", "offset=abc", "offset=", "offset=1.5", "offset=99999999999999999999"} {
				if got := f.get(t, "/api/sessions?"+q, http.StatusBadRequest); got != `{"error":"invalid offset"}`+"\n" {
					t.Errorf("?%s: %q", q, got)
				}
			}
		})
	}
}

// TestSessionSearchSnippet: every search result carries the text that
// matched: the message around the query word, or the title.
func TestSessionSearchSnippet(t *testing.T) {
	f := newFixture(t, seedConfig, true)
	storeSeedSessions(t, f)
	long := strings.Repeat("filler words before ", 10) + "the kubernetes rollout failed on the payments service " + strings.Repeat("and more after ", 10)
	if err := f.srv.Engine.Store.Append(seedID2,
		message.Message{Role: message.RoleUser, Content: []message.Block{message.Text("hello")}},
		message.Message{Role: message.RoleAssistant, Content: []message.Block{message.Text(long)}}); err != nil {
		t.Fatal(err)
	}
	f.srv.Catalog.MarkDirty(seedID2)

	var got []map[string]any
	if err := json.Unmarshal([]byte(f.get(t, "/api/sessions?q=kubernetes", http.StatusOK)), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0]["id"] != seedID2 {
		t.Fatalf("search kubernetes: %v", got)
	}
	snip, _ := got[0]["snippet"].(string)
	if !strings.Contains(snip, "kubernetes rollout failed") || len(snip) > 200 || !strings.HasPrefix(snip, "…") {
		t.Errorf("snippet %q: want the matching words, cut around them", snip)
	}
	// The meta's fields are all there beside it.
	for _, k := range []string{"created_at", "updated_at", "title", "model", "provider", "skills", "cwd"} {
		if _, ok := got[0][k]; !ok {
			t.Errorf("search result lacks %s: %v", k, got[0])
		}
	}

	// A title match: the snippet is the title.
	var meta map[string]any
	json.Unmarshal([]byte(f.get(t, "/api/sessions/"+seedID1, http.StatusOK)), &struct{ Meta *map[string]any }{&meta})
	title, _ := meta["title"].(string)
	word := strings.Fields(title)[0]
	json.Unmarshal([]byte(f.get(t, "/api/sessions?q="+word, http.StatusOK)), &got)
	if len(got) == 0 || got[0]["id"] != seedID1 || got[0]["snippet"] != title {
		t.Errorf("search %q (a title word): %v", word, got)
	}

	// offset pages through the ranking; past it is [].
	if got := f.get(t, "/api/sessions?q=kubernetes&offset=1", http.StatusOK); got != "[]\n" {
		t.Errorf("second page of one hit: %q", got)
	}
	if got := f.get(t, "/api/sessions?q=kubernetes&offset=5000", http.StatusOK); got != "[]\n" {
		t.Errorf("offset past the search depth: %q", got)
	}
}
