package rest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/history"
	"github.com/openheim/openheim/runtime/memory"
	"github.com/openheim/openheim/runtime/session"
)

// fixture is a data directory with a config, a session store and, when
// asked, the session index, served over real HTTP.
type fixture struct {
	srv   *Server
	files *session.FileStore
	url   string
}

func newFixture(t testing.TB, toml string, withCatalog bool) *fixture {
	t.Helper()
	home := t.TempDir()
	path := filepath.Join(home, "config.toml")
	if err := os.WriteFile(path, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadWith(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Getenv = func(string) string { return "" }
	cfg.WorkDir = filepath.Join(home, "work")
	if err := os.Mkdir(cfg.WorkDir, 0o700); err != nil {
		t.Fatal(err)
	}
	files, err := session.NewFileStore(filepath.Join(home, "history"))
	if err != nil {
		t.Fatal(err)
	}
	// Memory is opened only when a memory tool runs; listing needs no files.
	mem := &engine.MemoryOpener{Options: memory.Options{Dir: filepath.Join(home, "memory"), IndexDir: filepath.Join(home, "index", "memory")}}
	f := &fixture{files: files, srv: &Server{Engine: &engine.Engine{Config: cfg, Store: files, Memory: mem}}}
	if withCatalog {
		cat := &history.Catalog{Store: files, IndexDir: filepath.Join(home, "index", "sessions"), Timeout: 5 * time.Second}
		f.srv.Catalog = cat
		f.srv.Engine.Store = &history.Tracked{Store: files, Catalog: cat}
	}
	ts := httptest.NewServer(f.srv.Handler())
	t.Cleanup(ts.Close)
	f.url = ts.URL
	return f
}

type response struct {
	code   int
	header http.Header
	body   string
}

func (f *fixture) do(t *testing.T, method, path string) response {
	t.Helper()
	req, err := http.NewRequest(method, f.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{res.StatusCode, res.Header, string(b)}
}

// get fetches path, checks the status and the JSON headers, and returns the
// body.
func (f *fixture) get(t *testing.T, path string, code int) string {
	t.Helper()
	r := f.do(t, http.MethodGet, path)
	if r.code != code {
		t.Fatalf("GET %s: status %d, want %d; body %s", path, r.code, code, r.body)
	}
	checkJSONHeaders(t, "GET "+path, r)
	return r.body
}

func checkJSONHeaders(t *testing.T, what string, r response) {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s: Content-Type %q", what, ct)
	}
	if cc := r.header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("%s: Cache-Control %q", what, cc)
	}
	if !json.Valid([]byte(r.body)) || !strings.HasSuffix(r.body, "\n") {
		t.Errorf("%s: body is not one JSON value and a newline: %q", what, r.body)
	}
}

// sameJSON compares two JSON documents by value: key order and spacing do
// not matter, a missing key and a null one do.
func sameJSON(t *testing.T, what, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("%s: got invalid JSON: %v\n%s", what, err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: want invalid JSON: %v\n%s", what, err, want)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s:\n got %s\nwant %s", what, compact(got), compact(want))
	}
}

func compact(s string) string {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func TestSkillsAndMCPServers(t *testing.T) {
	f := newFixture(t, seedConfig, false)
	if got := f.get(t, "/api/skills", http.StatusOK); got != "[]\n" {
		t.Errorf("skills without a source: %q", got)
	}
	if got := f.get(t, "/api/mcp-servers", http.StatusOK); got != "[]\n" {
		t.Errorf("mcp servers without a source: %q", got)
	}
	f.srv.Skills = func() []string { return nil }
	f.srv.MCP = func() []MCPStatus { return nil }
	if got := f.get(t, "/api/skills", http.StatusOK); got != "[]\n" {
		t.Errorf("nil skills: %q", got)
	}
	if got := f.get(t, "/api/mcp-servers", http.StatusOK); got != "[]\n" {
		t.Errorf("nil mcp servers: %q", got)
	}

	f.srv.Skills = func() []string { return []string{"debugging", "rust", "vue"} }
	sameJSON(t, "GET /api/skills", f.get(t, "/api/skills", http.StatusOK), `["debugging", "rust", "vue"]`)

	str := func(s string) *string { return &s }
	f.srv.MCP = func() []MCPStatus {
		return []MCPStatus{
			{Name: "filesystem", Transport: "stdio", Command: str("npx"), Connected: true, ToolCount: 3},
			{Name: "remote-tools", Transport: "http", URL: str("http://localhost:8080/mcp"), Error: str("connection refused")},
		}
	}
	sameJSON(t, "GET /api/mcp-servers", f.get(t, "/api/mcp-servers", http.StatusOK), `[
  {
    "name": "filesystem",
    "transport": "stdio",
    "command": "npx",
    "url": null,
    "connected": true,
    "tool_count": 3,
    "error": null
  },
  {
    "name": "remote-tools",
    "transport": "http",
    "command": null,
    "url": "http://localhost:8080/mcp",
    "connected": false,
    "tool_count": 0,
    "error": "connection refused"
  }
]`)
}

func TestErrorsAreJSON(t *testing.T) {
	f := newFixture(t, seedConfig, false)
	for _, path := range []string{"/api/nope", "/api/config/extra", "/api/sessions/", "/api/", "/elsewhere"} {
		if got := f.get(t, path, http.StatusNotFound); got != `{"error":"not found"}`+"\n" {
			t.Errorf("GET %s: %q", path, got)
		}
	}
	for _, c := range []struct{ method, path string }{
		{http.MethodPost, "/api/config"},
		{http.MethodPut, "/api/sessions"},
		{http.MethodPost, "/api/sessions/550e8400-e29b-41d4-a716-446655440000"},
		{http.MethodPatch, "/api/tools"},
	} {
		r := f.do(t, c.method, c.path)
		what := c.method + " " + c.path
		if r.code != http.StatusMethodNotAllowed || r.body != `{"error":"method not allowed"}`+"\n" {
			t.Errorf("%s: %d %q", what, r.code, r.body)
		}
		if allow := r.header.Get("Allow"); !strings.Contains(allow, "GET") || strings.Contains(allow, "POST") {
			t.Errorf("%s: Allow %q", what, allow)
		}
		checkJSONHeaders(t, what, r)
	}
	// HEAD is served like GET, without a body.
	if r := f.do(t, http.MethodHead, "/api/config"); r.code != http.StatusOK || r.body != "" ||
		r.header.Get("Content-Type") != "application/json" {
		t.Errorf("HEAD /api/config: %d %q %v", r.code, r.body, r.header)
	}
}
