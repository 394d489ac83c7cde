package history

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
)

func TestCatalogStatus(t *testing.T) {
	dir := t.TempDir()
	store, err := session.NewFileStore(filepath.Join(dir, "history"))
	if err != nil {
		t.Fatal(err)
	}
	cat := &Catalog{Store: store, IndexDir: filepath.Join(dir, "index", "sessions")}
	tracked := &Tracked{Store: store, Catalog: cat}
	add := func() {
		m := session.NewMeta(time.Now())
		if err := tracked.Create(m); err != nil {
			t.Fatal(err)
		}
		if err := tracked.Append(m.ID, message.Message{Role: message.RoleUser, Content: []message.Block{message.Text("hi")}}); err != nil {
			t.Fatal(err)
		}
	}
	add()
	if st, err := cat.Status(); err != nil || !st.Missing {
		t.Fatalf("before any listing: %+v, %v", st, err)
	}
	if _, err := cat.List(Filter{}); err != nil {
		t.Fatal(err)
	}
	if st, err := cat.Status(); err != nil || st.Missing || st.Stale || st.Sessions != 1 || st.Changed != 0 {
		t.Fatalf("after a listing: %+v, %v", st, err)
	}
	add()
	st, err := cat.Status()
	if err != nil || !st.Stale || st.Changed != 1 || st.Sessions != 1 {
		t.Fatalf("after a new session: %+v, %v", st, err)
	}
	// Status changes nothing: the next listing still catches up.
	if list, _ := cat.List(Filter{}); len(list) != 2 {
		t.Fatalf("listed %d", len(list))
	}
	if st, _ := cat.Status(); st.Stale || st.Sessions != 2 {
		t.Fatalf("after catching up: %+v", st)
	}
}
