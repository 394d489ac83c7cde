package sessionsapi

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openheim/openheim/runtime/bundle/bundletest"
	"github.com/openheim/openheim/runtime/llm/llmtest"
)

// Tests of seed 003's items that issue 20 found openheim deviating from
// (docs/sessions-api.md, "Seed 003 conformance").

// createBundled posts a multipart create: metadata (nil: no such part)
// and a bundle (nil: none).
func (f *fixture) createBundled(metadata *string, bundle []byte) (int, map[string]any) {
	f.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	if metadata != nil {
		mw.WriteField("metadata", *metadata)
	}
	if bundle != nil {
		part, _ := mw.CreateFormFile("bundle", "agent.tar.gz")
		part.Write(bundle)
	}
	mw.Close()
	resp, err := http.Post(f.srv.URL+"/v1/sessions", mw.FormDataContentType(), &body)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	data, _ := io.ReadAll(resp.Body)
	json.Unmarshal(data, &out)
	return resp.StatusCode, out
}

// uploadedAgents lists the agents stored under agents-api, session-scoped
// ones included.
func (f *fixture) uploadedAgents() []string {
	entries, _ := os.ReadDir(filepath.Join(f.home, "agents-api"))
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

func str(s string) *string { return &s }

// TestIDsUniqueAcrossSessions: two sessions, and a fork of one, name no
// item and no response alike; each id names its session, and the fork's
// items are the source's under new ids.
func TestIDsUniqueAcrossSessions(t *testing.T) {
	f := newFixture(t, "")
	items := []map[string]any{{"type": "message", "role": "user", "content": "hi"}, {"type": "message", "role": "assistant", "content": "hello"}}
	a := f.create(map[string]any{"initial_items": items})
	b := f.create(map[string]any{"initial_items": items})
	var fork map[string]any
	if code := f.do("POST", "/v1/sessions/"+a["id"].(string)+"/fork", nil, &fork); code != 201 {
		t.Fatalf("fork: %d %v", code, fork)
	}
	seen := map[string]string{}
	for _, snap := range []map[string]any{a, b, fork} {
		conv := snap["id"].(string)
		its := snap["items"].([]any)
		if len(its) != 2 {
			t.Fatalf("%s: %v", conv, its)
		}
		for _, it := range its {
			m := it.(map[string]any)
			for _, key := range []string{"id", "response_id"} {
				v := m[key].(string)
				if !strings.Contains(v, string(idsOf(strings.TrimPrefix(conv, "conv_")))) {
					t.Errorf("%s %s does not name its session", key, v)
				}
				if other, dup := seen[v]; dup && other != conv {
					t.Errorf("%s %s is in %s and %s", key, v, other, conv)
				}
				seen[v] = conv
			}
		}
	}
	// Stable: the same session read again names its items the same way.
	var again map[string]any
	f.do("GET", "/v1/sessions/"+a["id"].(string), nil, &again)
	if string(mustJSON(again["items"])) != string(mustJSON(a["items"])) {
		t.Errorf("ids changed between reads:\n%s\n%s", mustJSON(a["items"]), mustJSON(again["items"]))
	}
	var bare map[string]any
	code := f.do("GET", "/v1/sessions/"+a["id"].(string)+"?include_items=false&include_liveness=false&refresh_state=true", nil, &bare)
	if items, ok := bare["items"].([]any); code != 200 || !ok || len(items) != 0 {
		t.Errorf("include_items=false: %d %v", code, bare["items"])
	}
}

// TestMultipartCreate: seed 003's create from a bundle is one transaction
// bound to a session-scoped agent: metadata and bundle are required (422),
// metadata takes only its documented fields (400), a create that fails
// (a bad workspace) leaves no agent behind, the same bundle starts a
// second session, and deleting a session takes its agent with it.
func TestMultipartCreate(t *testing.T) {
	f := newFixture(t, "")
	bundle := bundletest.Config("name: reviewer\ninstructions: Review.\n")
	if code, out := f.createBundled(nil, bundle); code != 422 || errCode(out) != "invalid_input" || !strings.Contains(errMsg(out), "metadata") {
		t.Errorf("no metadata: %d %v", code, out)
	}
	if code, out := f.createBundled(str(`{"title":"t"}`), nil); code != 422 || !strings.Contains(errMsg(out), "bundle") {
		t.Errorf("no bundle: %d %v", code, out)
	}
	for _, md := range []string{`{"agent_id":"ag_default"}`, `{"initial_items":[]}`, `{"title":"t","reasoning_effort":"high"}`, `not json`} {
		if code, out := f.createBundled(str(md), bundle); code != 400 {
			t.Errorf("metadata %s: %d %v", md, code, out)
		}
	}
	if code, out := f.createBundled(str(`{"workspace":"../.."}`), bundle); code != 400 || !strings.Contains(errMsg(out), "outside") {
		t.Errorf("bad workspace: %d %v", code, out)
	}
	if left := f.uploadedAgents(); len(left) != 0 {
		t.Fatalf("failed creates left agents: %v", left)
	}
	var convs []string
	for range 2 {
		code, out := f.createBundled(str(`{"title":"review","labels":{"k":"v"}}`), bundle)
		if code != 201 || !strings.HasPrefix(out["session_id"].(string), "conv_") {
			t.Fatalf("create: %d %v", code, out)
		}
		convs = append(convs, out["session_id"].(string))
	}
	var s1, s2 map[string]any
	f.do("GET", "/v1/sessions/"+convs[0], nil, &s1)
	f.do("GET", "/v1/sessions/"+convs[1], nil, &s2)
	if s1["agent_id"] == s2["agent_id"] || s1["agent_name"] != "reviewer" || s1["title"] != "review" || at(s1, "labels", "k") != "v" {
		t.Errorf("sessions: %v / %v", s1, s2)
	}
	var ag map[string]any
	if f.do("GET", "/api/agents/"+s1["agent_id"].(string), nil, &ag); ag["kind"] != "session" {
		t.Errorf("the session's agent: %v", ag)
	}
	var list map[string]any
	f.do("GET", "/api/agents", nil, &list)
	if strings.Contains(string(mustJSON(list)), "reviewer") {
		t.Errorf("session-scoped agents are listed: %s", mustJSON(list))
	}
	f.do("DELETE", "/v1/sessions/"+convs[0], nil, nil)
	if code := f.do("GET", "/api/agents/"+s1["agent_id"].(string), nil, nil); code != 404 {
		t.Errorf("a deleted session's agent: %d", code)
	}
	if left := f.uploadedAgents(); len(left) != 1 || left[0] != s2["agent_id"] {
		t.Errorf("agents left: %v", left)
	}
}

// TestCreateAndEventValidation422: a body that fails validation is a 422
// with code invalid_input (JSON create, events); a request the route
// cannot take stays a 400; an unknown agent a 404.
func TestCreateAndEventValidation422(t *testing.T) {
	f := newFixture(t, "")
	cases := []struct {
		body any
		code int
	}{
		{map[string]any{"title": 5}, 422},
		{map[string]any{"unknown": true}, 422},
		{map[string]any{"initial_items": []any{map[string]any{"type": "message", "role": "system", "content": "x"}}}, 422},
		{map[string]any{"client_tools": []any{map[string]any{"name": "bad name"}}}, 422},
		{map[string]any{"model_override": "nope/none"}, 422},
		{map[string]any{"host_id": "h"}, 400},
		{map[string]any{"agent_id": "ag_nope"}, 404},
	}
	for _, c := range cases {
		var out map[string]any
		code := f.do("POST", "/v1/sessions", c.body, &out)
		want := map[int]string{422: "invalid_input", 400: "invalid_input", 404: "not_found"}[c.code]
		if code != c.code || errCode(out) != want || errMsg(out) == "" {
			t.Errorf("%v: %d %v, want %d %s", c.body, code, out, c.code, want)
		}
	}
	req, _ := http.NewRequest("POST", f.srv.URL+"/v1/sessions", strings.NewReader("{not json"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 422 {
		t.Errorf("broken JSON: %v %v", resp.StatusCode, err)
	}
	resp.Body.Close()
}

// TestForkClonesAgent: a fork of a session bound to an uploaded agent gets
// a clone of it (a new id, the same bundle and config); a source whose
// agent is gone cannot be forked (404).
func TestForkClonesAgent(t *testing.T) {
	f := newFixture(t, "")
	f.llm.Enqueue(llmtest.Reply{Text: []string{"ok"}})
	code, out := f.createBundled(str(`{}`), bundletest.Config("name: helper\nmodel: m2\n"))
	if code != 201 {
		t.Fatalf("create: %d %v", code, out)
	}
	conv := out["session_id"].(string)
	var src, fork map[string]any
	f.do("GET", "/v1/sessions/"+conv, nil, &src)
	if code := f.do("POST", "/v1/sessions/"+conv+"/fork", map[string]any{}, &fork); code != 201 {
		t.Fatalf("fork: %d %v", code, fork)
	}
	if fork["agent_id"] == src["agent_id"] || fork["agent_name"] != "helper" || fork["model"] != "fake/m2" {
		t.Errorf("fork: %v, source %v", fork, src)
	}
	var clone map[string]any
	if f.do("GET", "/api/agents/"+fork["agent_id"].(string), nil, &clone); clone["kind"] != "session" || clone["model"] != "m2" {
		t.Errorf("clone: %v", clone)
	}
	// The fork runs on its own agent after the source's is gone.
	f.do("DELETE", "/api/agents/"+src["agent_id"].(string), nil, nil)
	var gone map[string]any
	if code := f.do("POST", "/v1/sessions/"+conv+"/fork", nil, &gone); code != 404 || errCode(gone) != "not_found" {
		t.Errorf("fork of a session whose agent is gone: %d %v", code, gone)
	}
	s := f.stream(fork["id"].(string))
	f.do("POST", "/v1/sessions/"+fork["id"].(string)+"/events", userMessage("hi"), nil)
	s.waitName("response.completed", 1)
	if raw := string(f.llm.Requests()[0].Raw); !strings.Contains(raw, `"model":"m2"`) {
		t.Errorf("the fork's turn: %.300s", raw)
	}
}

// TestPatchTitleNull: PATCH /v1/conversations {"title": null} clears the
// title (seed 003: string | null); PATCH /v1/sessions {"title": null}
// leaves it (seed 003: "null leaves the title unchanged").
func TestPatchTitleNull(t *testing.T) {
	f := newFixture(t, "")
	conv := f.create(map[string]any{"title": "named"})["id"].(string)
	var snap map[string]any
	if f.do("PATCH", "/v1/sessions/"+conv, map[string]any{"title": nil}, &snap); snap["title"] != "named" {
		t.Errorf("PATCH session title null: %v", snap["title"])
	}
	var c map[string]any
	if code := f.do("PATCH", "/v1/conversations/"+conv, map[string]any{"title": nil}, &c); code != 200 || c["title"] != nil {
		t.Errorf("PATCH conversation title null: %d %v", code, c)
	}
	if code := f.do("PATCH", "/v1/conversations/"+conv, map[string]any{"title": 3}, &c); code != 400 {
		t.Errorf("PATCH conversation title 3: %d %v", code, c)
	}
	f.do("PATCH", "/v1/conversations/"+conv, map[string]any{"title": "again"}, &c)
	if f.do("GET", "/v1/sessions/"+conv, nil, &snap); snap["title"] != "again" {
		t.Errorf("title: %v", snap["title"])
	}
}

// TestInitialItemsInCreateSnapshot: the 201 snapshot of a create whose
// last initial item is a user message shows every initial item, that one
// included, under the ids the stream gives it.
func TestInitialItemsInCreateSnapshot(t *testing.T) {
	f := newFixture(t, "")
	f.llm.Enqueue(llmtest.Reply{Text: []string{"answer"}})
	snap := f.create(map[string]any{"initial_items": []any{
		map[string]any{"type": "message", "role": "user", "content": "first"},
		map[string]any{"type": "message", "role": "assistant", "content": "reply"},
		map[string]any{"type": "message", "role": "user", "content": "go on"}}})
	items := snap["items"].([]any)
	if len(items) < 3 || at(items[2].(map[string]any), "content") == nil ||
		!strings.Contains(string(mustJSON(items[2])), "go on") || items[2].(map[string]any)["id"] != id(snap["id"].(string), "msg_2") {
		t.Errorf("201 snapshot items: %s", mustJSON(items))
	}
}

// uploadFile uploads a session file and returns its id.
func (f *fixture) uploadFile(conv, name string, data []byte) string {
	f.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	part, _ := mw.CreateFormFile("file", name)
	part.Write(data)
	mw.Close()
	resp, err := http.Post(f.srv.URL+"/v1/sessions/"+conv+"/resources/files", mw.FormDataContentType(), &body)
	if err != nil || resp.StatusCode != 201 {
		f.t.Fatalf("upload: %v %v", resp, err)
	}
	defer resp.Body.Close()
	var file map[string]any
	json.NewDecoder(resp.Body).Decode(&file)
	return file["id"].(string)
}

// TestItemsKeepFileIDs: a message's parts that name session files keep
// their file_id in the stored items (the stream's and the snapshot's),
// while the model got the files' contents.
func TestItemsKeepFileIDs(t *testing.T) {
	f := newFixture(t, "")
	f.llm.Enqueue(llmtest.Reply{Text: []string{"seen"}})
	conv := f.create(nil)["id"].(string)
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89")
	img := f.uploadFile(conv, "dot.png", png)
	txt := f.uploadFile(conv, "notes.txt", []byte("remember the milk\n"))
	s := f.stream(conv)
	post(f, conv, "message", map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "input_text", "text": "look"},
		map[string]any{"type": "input_image", "file_id": img},
		map[string]any{"type": "input_file", "file_id": txt}}})
	consumed := s.waitName("session.input.consumed", 1)
	s.waitName("response.completed", 1)
	var snap map[string]any
	f.do("GET", "/v1/sessions/"+conv, nil, &snap)
	parts := at(snap["items"].([]any)[0].(map[string]any), "content").([]any)
	var wantParts any
	json.Unmarshal([]byte(`[{"type":"input_text","text":"look"},{"type":"input_image","file_id":"`+img+`"},`+
		`{"type":"input_file","file_id":"`+txt+`","filename":"notes.txt"}]`), &wantParts)
	want := string(mustJSON(wantParts))
	if got := string(mustJSON(parts)); got != want {
		t.Errorf("parts:\n got %s\nwant %s", got, want)
	}
	if got := string(mustJSON(at(consumed.Data, "data", "item", "content"))); got != want {
		t.Errorf("streamed parts: %s", got)
	}
	if raw := string(f.llm.Requests()[0].Raw); !strings.Contains(raw, "remember the milk") || !strings.Contains(raw, "image/png") ||
		strings.Contains(raw, "file_id") {
		t.Errorf("the model's request: %.400s", raw)
	}
}
