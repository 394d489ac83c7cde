package rest

import (
	"net/http"
	"strings"
	"testing"

	"github.com/openheim/openheim/runtime/message"
)

func (f *fixture) send(t *testing.T, method, path, body string) response {
	t.Helper()
	req, _ := http.NewRequest(method, f.url+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := res.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return response{code: res.StatusCode, body: b.String(), header: res.Header}
}

// TestSessionSearchRenameDelete covers openheim's additions for the web
// client: ?q= full-text search, PATCH title, DELETE (to the trash).
func TestSessionSearchRenameDelete(t *testing.T) {
	f := newFixture(t, seedConfig, true)
	storeSeedSessions(t, f)
	if err := f.srv.Engine.Store.Append(seedID2, message.Message{Role: message.RoleUser, Content: []message.Block{message.Text("a kubernetes rollout")}}); err != nil {
		t.Fatal(err)
	}
	f.srv.Catalog.MarkDirty(seedID2)
	if got := f.get(t, "/api/sessions?q=kubernetes", http.StatusOK); !strings.Contains(got, seedID2) || strings.Contains(got, seedID1) {
		t.Errorf("search: %s", got)
	}
	if r := f.send(t, http.MethodPatch, "/api/sessions/"+seedID1, `{"title":"Renamed here"}`); r.code != 200 || !strings.Contains(r.body, `"title":"Renamed here"`) {
		t.Errorf("rename: %d %s", r.code, r.body)
	}
	for _, body := range []string{`{}`, `{"title":""}`, `{"title":"x","extra":1}`, `nope`} {
		if r := f.send(t, http.MethodPatch, "/api/sessions/"+seedID1, body); r.code != 400 {
			t.Errorf("rename %s: %d", body, r.code)
		}
	}
	if r := f.send(t, http.MethodPatch, "/api/sessions/00000000-0000-0000-0000-000000000000", `{"title":"x"}`); r.code != 404 {
		t.Errorf("rename unknown: %d", r.code)
	}
	var cancelled string
	f.srv.Cancel = func(id string) <-chan struct{} {
		cancelled = id
		c := make(chan struct{})
		close(c)
		return c
	}
	if r := f.send(t, http.MethodDelete, "/api/sessions/"+seedID1, ""); r.code != 200 || cancelled != seedID1 {
		t.Errorf("delete: %d %s (cancelled %q)", r.code, r.body, cancelled)
	}
	if r := f.do(t, http.MethodGet, "/api/sessions/"+seedID1); r.code != 404 {
		t.Errorf("deleted session: %d", r.code)
	}
	if r := f.send(t, http.MethodDelete, "/api/sessions/"+seedID1, ""); r.code != 404 {
		t.Errorf("delete twice: %d", r.code)
	}
}
