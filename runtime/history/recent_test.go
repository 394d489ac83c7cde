package history

import (
	"os"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
)

// TestListingCache: a listing in step with the index is answered from
// index/sessions.recent without opening the index, and every change a
// listing must show (a new message, a new title, a new or trashed
// session) takes it out of use.
func TestListingCache(t *testing.T) {
	c, tracked, _ := newCatalog(t)
	a := newSession(t, tracked, "alpha", say(message.RoleUser, "x"))
	newSession(t, tracked, "beta", say(message.RoleUser, "y"))
	for range 2 { // the first builds the index, the second reads it
		if _, err := c.List(Filter{Limit: 50}); err != nil {
			t.Fatal(err)
		}
	}
	served := func(f Filter) ([]Session, bool) {
		t.Helper()
		return c.cachedList(f, c.listState())
	}
	if list, ok := served(Filter{Limit: 50}); !ok || len(list) != 2 || list[0].Title != "beta" {
		t.Fatalf("after a listing: %+v %v", list, ok)
	}
	if list, ok := served(Filter{Limit: 1}); !ok || len(list) != 1 || list[0].Title != "beta" {
		t.Fatalf("--limit 1: %+v %v", list, ok)
	}
	if list, ok := served(Filter{Limit: 50, Since: time.Now().Add(time.Hour)}); !ok || len(list) != 0 {
		t.Fatalf("--since in the future: %+v %v", list, ok)
	}

	tracked.Append(a.ID, say(message.RoleAssistant, "z")) // a marker: out of use
	if _, ok := served(Filter{Limit: 50}); ok {
		t.Fatal("served with a change pending")
	}
	list, err := c.List(Filter{Limit: 50})
	if err != nil || len(list) != 2 || list[1].ID != a.ID || list[1].Messages != 2 {
		t.Fatalf("after an append: %+v %v", list, err)
	}
	c.List(Filter{Limit: 50})
	if cached, ok := served(Filter{Limit: 50}); !ok || cached[1].Messages != 2 {
		t.Fatalf("not cached again: %+v %v", cached, ok)
	}

	// A session copied in by hand: the history directory changed.
	m := session.NewMeta(time.Now().Add(time.Minute))
	m.Title = session.Str("copied")
	if err := c.Store.(*session.FileStore).Create(m); err != nil {
		t.Fatal(err)
	}
	if _, ok := served(Filter{Limit: 50}); ok {
		t.Fatal("served after a session appeared in history")
	}
	if list, _ := c.List(Filter{Limit: 50}); len(list) != 3 || list[0].Title != "copied" {
		t.Fatalf("after the copy: %+v", list)
	}

	// A listing that re-indexed removes the cache before writing.
	if err := tracked.Trash(m.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Search("x", 5); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(c.recentPath()); !os.IsNotExist(err) {
		t.Fatalf("cache kept across a re-index: %v", err)
	}
	if list, _ := c.List(Filter{Limit: 50}); len(list) != 2 {
		t.Fatalf("after the trash: %+v", list)
	}
}
