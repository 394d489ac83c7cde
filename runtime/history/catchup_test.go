package history

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
)

// copyIn writes n sessions straight into the history directory, as a copy
// or a restore from a backup does: no marker, no index update. Each has
// two messages, the second holding word, and is newer than anything made
// through the store before.
func copyIn(t *testing.T, dir string, n int, word string) []string {
	t.Helper()
	ids := make([]string, n)
	base := time.Now().Add(time.Hour)
	for i := range n {
		m := session.NewMeta(base.Add(time.Duration(i) * time.Second))
		m.Title = session.Str(fmt.Sprintf("copied %d", i))
		meta, _ := json.Marshal(m)
		var msgs []byte
		for _, msg := range []message.Message{say(message.RoleUser, "question"), say(message.RoleAssistant, word+" answer")} {
			line, _ := json.Marshal(msg)
			msgs = append(append(msgs, line...), '\n')
		}
		if err := os.WriteFile(filepath.Join(dir, m.ID+".jsonl"), msgs, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, m.ID+".json"), meta, 0o600); err != nil {
			t.Fatal(err)
		}
		ids[i] = m.ID
	}
	return ids
}

// TestBulkCopyIsListedAtOnce: hundreds of session files copied into history are
// all listed by the first listing, although a reader indexes only one
// batch of them; search answers from what is indexed and says how many
// are not yet; readers after it finish the job.
func TestBulkCopyIsListedAtOnce(t *testing.T) {
	// Enough copies for many catch-up batches (scripts/bench/sessions.sh
	// times 1,900); each batch is an index commit, slow under -race.
	const copies = 400
	c, tracked, _ := newCatalog(t)
	own := newSession(t, tracked, "own", say(message.RoleUser, "kubernetes ingress"))
	if _, err := c.List(Filter{}); err != nil {
		t.Fatal(err)
	}
	ids := copyIn(t, c.Store.(*session.FileStore).Dir, copies, "zeppelin")
	c.ListBudget, c.SearchBudget = time.Nanosecond, time.Nanosecond // one batch per reader

	list, err := c.List(Filter{})
	if err != nil || len(list) != copies+1 {
		t.Fatalf("listed %d, %v", len(list), err)
	}
	if list[0].ID != ids[copies-1] || list[0].Messages != 2 || list[copies].ID != own.ID {
		t.Fatalf("order or counts: first %+v, last %+v", list[0], list[copies])
	}
	top, err := c.List(Filter{Limit: 3})
	if err != nil || len(top) != 3 || top[0].ID != ids[copies-1] || top[2].ID != ids[copies-3] {
		t.Fatalf("newest 3: %+v %v", top, err)
	}
	if st, err := c.Status(); err != nil || !st.Stale || st.Sessions >= copies+1 {
		t.Fatalf("the index caught up in one listing: %+v %v", st, err)
	}

	hits, behind, err := c.SearchBehind("kubernetes", 5)
	if err != nil || len(hits) != 1 || hits[0].Session.ID != own.ID {
		t.Fatalf("search while behind: %+v %v", hits, err)
	}
	if behind == 0 || behind >= copies {
		t.Fatalf("behind = %d, want some but not all of the copies", behind)
	}
	for i := 0; behind > 0; i++ {
		if i > copies/firstCatchUp {
			t.Fatalf("still %d behind", behind)
		}
		_, behind, err = c.SearchBehind("zeppelin", 5)
		if err != nil {
			t.Fatal(err)
		}
	}
	hits, behind, err = c.SearchBehind("zeppelin", copies+100)
	if err != nil || behind != 0 || len(hits) != copies || !strings.Contains(hits[0].Snippet, "zeppelin") {
		t.Fatalf("after catching up: %d hits, behind %d, %v", len(hits), behind, err)
	}
	if st, _ := c.Status(); st.Stale || st.Sessions != copies+1 {
		t.Fatalf("status after catching up: %+v", st)
	}
}

// TestDirtyBeyondBudgetListsFromTheStore: sessions changed by turns but
// not re-indexed within the budget are listed as the store has them.
func TestDirtyBeyondBudgetListsFromTheStore(t *testing.T) {
	c, tracked, _ := newCatalog(t)
	a := newSession(t, tracked, "before", say(message.RoleUser, "x"))
	if _, err := c.List(Filter{}); err != nil {
		t.Fatal(err)
	}
	tracked.Append(a.ID, say(message.RoleAssistant, "y"))
	m, _ := tracked.LoadMeta(a.ID)
	m.Title = session.Str("after")
	tracked.SaveMeta(*m)
	c.ListBudget = time.Nanosecond // past before the first marker
	list, err := c.List(Filter{})
	if err != nil || len(list) != 1 || list[0].Title != "after" || list[0].Messages != 2 {
		t.Fatalf("%+v %v", list, err)
	}
	if st, _ := c.Status(); st.Changed != 1 {
		t.Fatalf("the listing re-indexed the session (status %+v): nothing came from the store", st)
	}
}
