package history

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/index/sessions"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
)

func newCatalog(t *testing.T) (*Catalog, *Tracked, *[]string) {
	t.Helper()
	home := t.TempDir()
	files, err := session.NewFileStore(filepath.Join(home, "history"))
	if err != nil {
		t.Fatal(err)
	}
	var warnings []string
	c := &Catalog{Store: files, IndexDir: filepath.Join(home, "index", "sessions"), Timeout: 200 * time.Millisecond,
		Warn: func(m string) { warnings = append(warnings, m) }}
	return c, &Tracked{Store: files, Catalog: c}, &warnings
}

func say(role message.Role, s string) message.Message {
	return message.Message{Role: role, Content: []message.Block{message.Text(s)}}
}

func newSession(t *testing.T, s session.Store, title string, msgs ...message.Message) session.Meta {
	t.Helper()
	m := session.NewMeta(time.Now())
	m.Title = session.Str(title)
	if err := s.Create(m); err != nil {
		t.Fatal(err)
	}
	if err := s.Append(m.ID, msgs...); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestIndexFollowsTrackedWrites(t *testing.T) {
	c, store, _ := newCatalog(t)
	a := newSession(t, store, "alpha", say(message.RoleUser, "configure the kubernetes ingress"))
	list, err := c.List(Filter{})
	if err != nil || len(list) != 1 || list[0].Messages != 1 {
		t.Fatalf("%+v %v", list, err)
	}
	// Appending after the index was built marks the session; the next
	// reader indexes the new message before answering.
	store.Append(a.ID, say(message.RoleAssistant, "use a certificate from letsencrypt"))
	hits, err := c.Search("letsencrypt", 5)
	if err != nil || len(hits) != 1 || hits[0].Session.Messages != 2 || !strings.Contains(hits[0].Snippet, "letsencrypt") {
		t.Fatalf("%+v %v", hits, err)
	}
	if marks, _ := os.ReadDir(c.dirtyDir()); len(marks) != 0 {
		t.Errorf("markers left after sync: %d", len(marks))
	}
	// Trash removes it from the index too.
	if err := store.Trash(a.ID); err != nil {
		t.Fatal(err)
	}
	if list, _ := c.List(Filter{}); len(list) != 0 {
		t.Fatalf("trashed session still listed: %+v", list)
	}
}

func TestIndexCatchesUntrackedChanges(t *testing.T) {
	c, store, _ := newCatalog(t)
	newSession(t, store, "tracked", say(message.RoleUser, "one"))
	c.List(Filter{})
	// Written behind the index's back (an older openheim, a copied file):
	// the session count differs, so the reader reconciles.
	hand := newSession(t, c.Store, "by hand", say(message.RoleUser, "zeppelin"))
	if hits, err := c.Search("zeppelin", 5); err != nil || len(hits) != 1 || hits[0].Session.ID != hand.ID {
		t.Fatalf("%+v %v", hits, err)
	}
	os.Remove(filepath.Join(c.Store.(*session.FileStore).Dir, hand.ID+".json"))
	os.Remove(filepath.Join(c.Store.(*session.FileStore).Dir, hand.ID+".jsonl"))
	if list, _ := c.List(Filter{}); len(list) != 1 || list[0].Title != "tracked" {
		t.Fatalf("%+v", list)
	}
}

func TestMissingIndexIsBuiltByTheFirstReader(t *testing.T) {
	c, _, _ := newCatalog(t)
	for range 3 {
		newSession(t, c.Store, "s", say(message.RoleUser, "hello"))
	}
	list, err := c.List(Filter{Limit: 2})
	if err != nil || len(list) != 2 {
		t.Fatalf("%d sessions, %v", len(list), err)
	}
	if st, err := c.Status(); err != nil || st.Missing || st.Stale || st.Sessions != 3 {
		t.Fatalf("after the first listing: %+v, %v", st, err)
	}
}

func TestBusyIndexFallsBackToTheStore(t *testing.T) {
	c, store, warnings := newCatalog(t)
	newSession(t, store, "alpha", say(message.RoleUser, "x"), say(message.RoleAssistant, "y"))
	c.List(Filter{})
	holder, err := sessions.Open(c.IndexDir, sessions.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	list, err := c.List(Filter{})
	if err != nil || len(list) != 1 || list[0].Messages != 2 {
		t.Fatalf("%+v %v", list, err)
	}
	if len(*warnings) == 0 || !strings.Contains((*warnings)[0], "busy") {
		t.Errorf("warnings = %v", *warnings)
	}
}

func TestSnippet(t *testing.T) {
	text := strings.Repeat("a ", 100) + "the Needle is here " + strings.Repeat("b ", 100)
	got := snippet(text, []string{"needle"})
	if !strings.Contains(got, "Needle") || !strings.HasPrefix(got, "…") || !strings.HasSuffix(got, "…") || len(got) > 130 {
		t.Fatalf("%q", got)
	}
	if got := snippet("short text", []string{"zzz"}); got != "short text" {
		t.Fatalf("%q", got)
	}
}
