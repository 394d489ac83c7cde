package commands

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

// TestSessionsLsListsCopiedFilesAtOnce: 1,900 session files copied into
// history (a restore from a backup) are all listed by the next `sessions
// ls`, which indexes only what its budget allows; `sessions search` answers
// meanwhile and says that the index is catching up.
func TestSessionsLsListsCopiedFilesAtOnce(t *testing.T) {
	e := newTestEnv(t, fakeConfig)
	own := e.addSession("own", "tell me about kubernetes", "ingress", time.Now().Add(-time.Hour))
	files := e.sessions().Dir
	meta, _ := os.ReadFile(filepath.Join(files, own.ID+".json"))
	msgs, _ := os.ReadFile(filepath.Join(files, own.ID+".jsonl"))
	tight := func() (*Sessions, error) {
		s, err := e.f.Sessions()
		if err == nil {
			s.Catalog.ListBudget, s.Catalog.SearchBudget = time.Nanosecond, time.Nanosecond
		}
		return s, err
	}
	ls := &SessionsLsOptions{IO: e.f.IOStreams, Sessions: tight, Output: jsonOutput{Select: "id"}}
	if err := sessionsLsRun(context.Background(), ls); err != nil || strings.TrimSpace(e.out.String()) != own.ID {
		t.Fatalf("before the copy: %q %v", e.out, err)
	}

	copied := map[string]bool{}
	for range 1900 {
		id := uuid.NewString()
		copied[id] = true
		if err := os.WriteFile(filepath.Join(files, id+".jsonl"), msgs, 0o600); err != nil {
			t.Fatal(err)
		}
		m := strings.Replace(string(meta), own.ID, id, 1)
		if err := os.WriteFile(filepath.Join(files, id+".json"), []byte(m), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	e.reset()
	if err := sessionsLsRun(context.Background(), ls); err != nil {
		t.Fatal(err)
	}
	listed := strings.Fields(e.out.String())
	for _, id := range listed {
		delete(copied, id)
	}
	if len(listed) != 1901 || len(copied) != 0 {
		t.Fatalf("listed %d sessions, %d copies missing", len(listed), len(copied))
	}
	if st, err := e.sessions().Catalog.Status(); err != nil || !st.Stale {
		t.Fatalf("the listing indexed every copy before answering: %+v %v", st, err)
	}

	e.reset()
	search := &SessionsSearchOptions{IO: e.f.IOStreams, Sessions: tight, Query: "kubernetes", Limit: 5000, Output: jsonOutput{Select: "session_id"}}
	if err := sessionsSearchRun(context.Background(), search); err != nil {
		t.Fatal(err)
	}
	if n := len(strings.Fields(e.out.String())); n == 0 || n >= 1901 {
		t.Errorf("search while catching up found %d sessions", n)
	}
	if !strings.Contains(e.errOut.String(), "the search index is catching up") || !strings.Contains(e.errOut.String(), "sessions not searched yet") {
		t.Errorf("stderr: %q", e.errOut)
	}
}
