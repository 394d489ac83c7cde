package rest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/session"
)

const (
	seedID1 = "550e8400-e29b-41d4-a716-446655440000" // newer, all fields set
	seedID2 = "661f9511-f3ac-52e5-b827-557766551111" // older, nulls
)

func readSeed(t testing.TB, name string, v any) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// storeSeedSessions stores seed 000's two ConversationMetas, the older one
// last, so only sorting by updated_at gives the seed's order.
func storeSeedSessions(t *testing.T, f *fixture) string {
	t.Helper()
	var metas []session.Meta
	want := readSeed(t, "seed_sessions.json", &metas)
	for _, m := range metas {
		if err := f.srv.Engine.Store.Create(m); err != nil {
			t.Fatal(err)
		}
	}
	return want
}

func TestSessionsList(t *testing.T) {
	for _, withCatalog := range []bool{false, true} {
		t.Run(fmt.Sprintf("catalog=%v", withCatalog), func(t *testing.T) {
			f := newFixture(t, seedConfig, withCatalog)
			if got := f.get(t, "/api/sessions", http.StatusOK); got != "[]\n" {
				t.Errorf("no sessions: %q", got)
			}
			want := storeSeedSessions(t, f)
			sameJSON(t, "GET /api/sessions", f.get(t, "/api/sessions", http.StatusOK), want)
			var seed []json.RawMessage
			json.Unmarshal([]byte(want), &seed)
			first, second := string(seed[0]), string(seed[1])

			for path, want := range map[string]string{
				"/api/sessions?limit=1":                         "[" + first + "]",
				"/api/sessions?limit=2":                         "[" + first + "," + second + "]",
				"/api/sessions?limit=500":                       "[" + first + "," + second + "]",
				"/api/sessions?cwd=/home/user/my-project":       "[" + first + "]",
				"/api/sessions?cwd=%2Fhome%2Fuser%2Fmy-project": "[" + first + "]",
				"/api/sessions?cwd=/home/user":                  "[]",
				"/api/sessions?cwd=":                            "[" + first + "," + second + "]",
			} {
				sameJSON(t, "GET "+path, f.get(t, path, http.StatusOK), want)
			}
			for _, q := range []string{"limit=0", "limit=-1", "limit=abc", "limit=", "limit=1.5", "limit=99999999999999999999", "limit=%201"} {
				if got := f.get(t, "/api/sessions?"+q, http.StatusBadRequest); got != `{"error":"invalid limit"}`+"\n" {
					t.Errorf("?%s: %q", q, got)
				}
			}
			if got := f.get(t, "/api/sessions?cwd=home/user", http.StatusBadRequest); got != `{"error":"invalid cwd"}`+"\n" {
				t.Errorf("relative cwd: %q", got)
			}

			// A session saved with no skills (null on disk) lists [] and,
			// being the newest, comes first; the index (if any) follows.
			m := session.NewMeta(time.Now())
			m.Skills = nil
			if err := f.srv.Engine.Store.Create(m); err != nil {
				t.Fatal(err)
			}
			var got []map[string]any
			json.Unmarshal([]byte(f.get(t, "/api/sessions", http.StatusOK)), &got)
			if len(got) != 3 || got[0]["id"] != m.ID {
				t.Fatalf("after a new session: %v", got)
			}
			if s, ok := got[0]["skills"].([]any); !ok || len(s) != 0 {
				t.Errorf("skills: %#v", got[0]["skills"])
			}
			for _, k := range []string{"title", "model", "provider", "cwd"} {
				if v, ok := got[0][k]; !ok || v != nil {
					t.Errorf("%s: present %v, value %v; want null", k, ok, v)
				}
			}
			if _, ok := got[0]["context_usage"]; ok {
				t.Errorf("context_usage present before the first turn: %v", got[0])
			}
			if ids := listIDs(t, f, "/api/sessions?limit=1"); len(ids) != 1 || ids[0] != m.ID {
				t.Errorf("paged list after a new session: %v", ids)
			}
		})
	}
}

// vanishing is a store where some sessions disappear (or break) after the
// index listed them.
type vanishing struct {
	session.Store
	gone, broken string
}

func (s vanishing) LoadMeta(id string) (*session.Meta, error) {
	switch id {
	case s.gone:
		return nil, fmt.Errorf("%w: %s", session.ErrNotFound, id)
	case s.broken:
		return nil, errors.New("/secret/path/" + id + ".json: unexpected end of JSON input")
	}
	return s.Store.LoadMeta(id)
}

func (s vanishing) Load(id string) (*session.Conversation, error) {
	if id == s.broken {
		return nil, errors.New("/secret/path/" + id + ".jsonl:3: corrupt message")
	}
	return s.Store.Load(id)
}

func TestSessionsListWithCatalogTrouble(t *testing.T) {
	f := newFixture(t, seedConfig, true)
	storeSeedSessions(t, f)
	// A narrowed list goes through the index (the whole list reads the
	// store directly); the first one builds it.
	f.get(t, "/api/sessions?limit=10", http.StatusOK)

	// Sessions the index still lists but whose meta is gone or unreadable
	// are left out; the others are served.
	tracked := f.srv.Engine.Store
	f.srv.Engine.Store = vanishing{Store: tracked, gone: seedID1}
	if ids := listIDs(t, f, "/api/sessions?limit=10"); strings.Join(ids, ",") != seedID2 {
		t.Errorf("with %s gone: %v", seedID1, ids)
	}
	f.srv.Engine.Store = vanishing{Store: tracked, broken: seedID2}
	if ids := listIDs(t, f, "/api/sessions?limit=10"); strings.Join(ids, ",") != seedID1 {
		t.Errorf("with %s broken: %v", seedID2, ids)
	}
	f.srv.Engine.Store = tracked

	// An index that cannot be opened at all: the store answers instead.
	block := filepath.Join(t.TempDir(), "file")
	os.WriteFile(block, nil, 0o600)
	f.srv.Catalog.IndexDir = filepath.Join(block, "index")
	if ids := listIDs(t, f, "/api/sessions?limit=1"); strings.Join(ids, ",") != seedID1 {
		t.Errorf("without an index: %v", ids)
	}
}

func listIDs(t *testing.T, f *fixture, path string) []string {
	t.Helper()
	var metas []session.Meta
	if err := json.Unmarshal([]byte(f.get(t, path, http.StatusOK)), &metas); err != nil {
		t.Fatal(err)
	}
	ids := []string{}
	for _, m := range metas {
		ids = append(ids, m.ID)
	}
	return ids
}

func TestSession(t *testing.T) {
	f := newFixture(t, seedConfig, false)
	var conv session.Conversation
	want := readSeed(t, "seed_session.json", &conv)
	if err := f.srv.Engine.Store.Create(conv.Meta); err != nil {
		t.Fatal(err)
	}
	if err := f.srv.Engine.Store.Append(conv.Meta.ID, conv.Messages...); err != nil {
		t.Fatal(err)
	}
	// Thinking with signature, tool_use with arguments as a string,
	// tool_result with is_error only when true: exactly the seed's JSON.
	sameJSON(t, "GET /api/sessions/{id}", f.get(t, "/api/sessions/"+seedID1, http.StatusOK), want)

	// A session with no messages yet.
	m := session.NewMeta(time.Date(2025, 5, 9, 9, 0, 0, 0, time.UTC))
	m.ID = seedID2
	if err := f.srv.Engine.Store.Create(m); err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "new session", f.get(t, "/api/sessions/"+seedID2, http.StatusOK),
		`{"meta":{"id":"`+seedID2+`","created_at":"2025-05-09T09:00:00Z","updated_at":"2025-05-09T09:00:00Z",`+
			`"title":null,"model":null,"provider":null,"skills":[],"cwd":null},"messages":[]}`)

	for _, id := range []string{"not-a-uuid", strings.ToUpper(seedID1), seedID1 + "0", "%2e%2e", "x%2Fy"} {
		if got := f.get(t, "/api/sessions/"+id, http.StatusBadRequest); got != `{"error":"invalid session id"}`+"\n" {
			t.Errorf("%s: %q", id, got)
		}
	}
	unknown := "00000000-0000-4000-8000-000000000000"
	if got := f.get(t, "/api/sessions/"+unknown, http.StatusNotFound); got != `{"error":"session not found"}`+"\n" {
		t.Errorf("unknown: %q", got)
	}
}

func TestSessionInternalErrorIsLoggedNotLeaked(t *testing.T) {
	f := newFixture(t, seedConfig, false)
	storeSeedSessions(t, f)
	f.srv.Engine.Store = vanishing{Store: f.srv.Engine.Store, broken: seedID1}

	var logs bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	defer slog.SetDefault(old)

	if got := f.get(t, "/api/sessions/"+seedID1, http.StatusInternalServerError); got != `{"error":"internal error"}`+"\n" {
		t.Errorf("body %q", got)
	}
	if !strings.Contains(logs.String(), "corrupt message") || !strings.Contains(logs.String(), seedID1) {
		t.Errorf("the cause is not logged: %s", logs.String())
	}
}
