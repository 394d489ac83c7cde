package sessionsapi

import (
	"archive/tar"
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/bundle"
	"github.com/openheim/openheim/runtime/bundle/bundletest"
)

// agentTestMaxBundle keeps the size limits small enough to cross in a test.
const agentTestMaxBundle = 64 << 10

// agentFixture is the agent routes over a store in temporary directories,
// with a clock that ticks one second per upload.
type agentFixture struct {
	t           *testing.T
	dir, agents string
	clock       atomic.Int64
	store       *bundle.Dir
	mux         *http.ServeMux
	api         *API
}

func newAgentFixture(t *testing.T) *agentFixture {
	t.Helper()
	f := &agentFixture{t: t, dir: filepath.Join(t.TempDir(), "agents-api"), agents: filepath.Join(t.TempDir(), "agents")}
	f.clock.Store(2000)
	f.reopen()
	return f
}

// reopen builds a new store and API over the same directories.
func (f *agentFixture) reopen() {
	f.t.Helper()
	now := func() time.Time { return time.Unix(f.clock.Add(1)-1, 0) }
	validate := func(ag Agent) error {
		if ag.Model == "nope" {
			return errors.New(`model "nope": no such model`)
		}
		return nil
	}
	store, err := bundle.OpenDir(f.dir)
	if err != nil {
		f.t.Fatal(err)
	}
	f.store = store
	f.api = &API{agents: newAgents(store, f.agents, agentTestMaxBundle, now, validate), opts: Options{MaxBundleBytes: agentTestMaxBundle}}
	// No sessions: DELETE's cancelAgent finds none bound to the agent.
	if f.api.sessions, err = newSessionRegistry(f.api, filepath.Join(filepath.Dir(f.dir), "sessions-api")); err != nil {
		f.t.Fatal(err)
	}
	f.mux = http.NewServeMux()
	for _, r := range f.api.agentRoutes() {
		f.mux.Handle(r.pattern, r.limited(bodyLimit)) // as Register does
	}
}

// do sends a request and decodes the JSON answer into out (if not nil).
func (f *agentFixture) do(method, target, contentType string, body []byte, out any) int {
	f.t.Helper()
	req := httptest.NewRequest(method, target, bytes.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	rec := httptest.NewRecorder()
	f.mux.ServeHTTP(rec, req)
	if out != nil {
		if err := json.Unmarshal(rec.Body.Bytes(), out); err != nil {
			f.t.Fatalf("%s %s: %d %q: %v", method, target, rec.Code, rec.Body, err)
		}
	}
	return rec.Code
}

// upload posts bundle as the multipart part named part.
func (f *agentFixture) upload(part string, bundle []byte, out any) int {
	f.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("note", "ignored")
	w, _ := mw.CreateFormFile(part, "agent.tar.gz")
	w.Write(bundle)
	mw.Close()
	return f.do("POST", "/api/agents", mw.FormDataContentType(), body.Bytes(), out)
}

// create uploads a bundle with config cfg and wants a 201.
func (f *agentFixture) create(cfg string) Agent {
	f.t.Helper()
	var ag Agent
	if code := f.upload("bundle", bundletest.Config(cfg), &ag); code != http.StatusCreated {
		f.t.Fatalf("create: %d %+v", code, ag)
	}
	return ag
}

// writeProfile writes agents/<name>.md with the given mtime.
func (f *agentFixture) writeProfile(name, text string, mtime int64) {
	f.t.Helper()
	os.MkdirAll(f.agents, 0o755)
	path := filepath.Join(f.agents, name+".md")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		f.t.Fatal(err)
	}
	os.Chtimes(path, time.Unix(mtime, 0), time.Unix(mtime, 0))
}

const agentFullConfig = `name: reviewer
description: Reviews diffs
model: fake/m1
provider: fake
instructions: |
  You review code.
  Cite file:line.
skills: [go, review]
tools:
  - read_file
  - search_files
max_iterations: 7
`

func TestAgentCreate(t *testing.T) {
	f := newAgentFixture(t)
	ag := f.create(agentFullConfig)
	want := Agent{
		ID: ag.ID, Object: "agent", Name: "reviewer", Description: "Reviews diffs", CreatedAt: 2000,
		Model: "fake/m1", Provider: "fake", Instructions: "You review code.\nCite file:line.",
		Skills: []string{"go", "review"}, Tools: []string{"read_file", "search_files"}, MaxIterations: 7, Source: "bundle",
	}
	if !regexp.MustCompile(`^ag_[0-9a-f]{24}$`).MatchString(ag.ID) {
		t.Errorf("id %q", ag.ID)
	}
	if !reflect.DeepEqual(ag, want) {
		t.Errorf("created\n got %+v\nwant %+v", ag, want)
	}
	p := ag.Profile()
	if p.Name != "reviewer" || p.System != want.Instructions || p.Model != "fake/m1" || p.Provider != "fake" ||
		p.MaxIterations != 7 || !reflect.DeepEqual(p.Tools, want.Tools) || p.Description != "Reviews diffs" {
		t.Errorf("profile %+v", p)
	}
	stored, err := os.ReadFile(filepath.Join(f.dir, ag.ID, "bundle.tar.gz"))
	if err != nil || !bytes.Equal(stored, bundletest.Config(agentFullConfig)) {
		t.Errorf("stored bundle: %v", err)
	}

	// The wire shape: skills never null, tools null for every tool.
	var raw map[string]any
	f.create("name: minimal\n")
	f.do("GET", "/api/agents?limit=1", "", nil, &raw)
	got := raw["data"].([]any)[0].(map[string]any)
	if got["name"] != "minimal" || !reflect.DeepEqual(got["skills"], []any{}) || got["tools"] != nil {
		t.Errorf("minimal agent: %v", got)
	}
	if _, ok := got["tools"]; !ok {
		t.Errorf("tools missing: %v", got)
	}

	// A new store over the same directory has them.
	f.reopen()
	var again Agent
	if code := f.do("GET", "/api/agents/"+ag.ID, "", nil, &again); code != 200 || !reflect.DeepEqual(again, want) {
		t.Errorf("after reopen: %d %+v", code, again)
	}
}

func TestAgentCreateLayouts(t *testing.T) {
	f := newAgentFixture(t)
	for name, bundle := range map[string][]byte{
		"in-dir":     bundletest.TarGz(bundletest.Dir("in-dir/"), bundletest.File("in-dir/config.yaml", "name: in-dir\n"), bundletest.File("in-dir/notes/a.md", "x")),
		"dot-slash":  bundletest.TarGz(bundletest.Dir("./"), bundletest.File("./config.yaml", "name: dot-slash\n"), bundletest.File("./README.md", "x")),
		"empty-list": bundletest.TarGz(bundletest.File("config.yaml", "name: empty-list\ntools: []\n")),
	} {
		var ag Agent
		if code := f.upload("bundle", bundle, &ag); code != 201 || ag.Name != name {
			t.Errorf("%s: %d %+v", name, code, ag)
		}
		if name == "empty-list" && (ag.Tools == nil || len(ag.Tools) != 0) {
			t.Errorf("tools: [] must be no tools, got %#v", ag.Tools)
		}
	}
}

func TestAgentListAndGet(t *testing.T) {
	f := newAgentFixture(t)
	f.writeProfile("reader", "---\ndescription: Reads code\nmodel: m2\ntools: [read_file]\nmax_iterations: 3\n---\nYou read.\n", 1500)
	f.writeProfile("broken", "---\ndescription: never closed\n", 1600)
	var ids []string
	for i := range 3 {
		ids = append(ids, f.create(fmt.Sprintf("name: a%d\n", i)).ID)
	}
	page := func(query string) string {
		t.Helper()
		var l List[Agent]
		if code := f.do("GET", "/api/agents"+query, "", nil, &l); code != 200 {
			t.Fatalf("%s: %d", query, code)
		}
		var names []string
		for _, ag := range l.Data {
			names = append(names, ag.Name)
		}
		s := strings.Join(names, ",")
		if l.HasMore {
			s += "+"
		}
		if len(l.Data) > 0 && (*l.FirstID != l.Data[0].ID || *l.LastID != l.Data[len(l.Data)-1].ID) {
			t.Errorf("%s: first/last ids %v %v", query, *l.FirstID, *l.LastID)
		}
		return s
	}
	for query, want := range map[string]string{
		"":                           "a2,a1,a0,reader,openheim",
		"?limit=2":                   "a2,a1+",
		"?limit=2&after=" + ids[1]:   "a0,reader+",
		"?after=ag_profile_reader":   "openheim",
		"?order=asc&limit=2":         "openheim,reader+",
		"?order=asc&after=" + ids[1]: "a2",
		"?before=ag_default&limit=1": "reader+",
	} {
		if got := page(query); got != want {
			t.Errorf("%q: got %q, want %q", query, got, want)
		}
	}
	var e map[string]any
	if code := f.do("GET", "/api/agents?after=ag_nope", "", nil, &e); code != 400 {
		t.Errorf("bad cursor: %d %v", code, e)
	}

	var ag Agent
	if code := f.do("GET", "/api/agents/ag_profile_reader", "", nil, &ag); code != 200 {
		t.Fatalf("get profile: %d", code)
	}
	want := Agent{ID: "ag_profile_reader", Object: "agent", Name: "reader", Description: "Reads code", CreatedAt: 1500,
		Model: "m2", Instructions: "You read.", Skills: []string{}, Tools: []string{"read_file"}, MaxIterations: 3, Source: "profile"}
	if !reflect.DeepEqual(ag, want) {
		t.Errorf("profile agent\n got %+v\nwant %+v", ag, want)
	}
	if code := f.do("GET", "/api/agents/ag_default", "", nil, &ag); code != 200 || ag.Name != "openheim" || ag.Source != "default" ||
		ag.CreatedAt != 0 || ag.Skills == nil || ag.Tools != nil {
		t.Errorf("default agent: %d %+v", code, ag)
	}
	for _, id := range []string{"ag_profile_broken", "ag_profile_nope", "ag_000000000000000000000000", "ag_.."} {
		if code := f.do("GET", "/api/agents/"+id, "", nil, &e); code != 404 || !strings.Contains(errMsg(e), "not found") {
			t.Errorf("get %s: %d %v", id, code, e)
		}
	}
}

func TestAgentDelete(t *testing.T) {
	f := newAgentFixture(t)
	f.writeProfile("reader", "You read.\n", 1500)
	ag := f.create("name: doomed\n")
	var out map[string]any
	if code := f.do("DELETE", "/api/agents/"+ag.ID, "", nil, &out); code != 200 ||
		!reflect.DeepEqual(out, map[string]any{"id": ag.ID, "object": "agent.deleted", "deleted": true}) {
		t.Errorf("delete: %d %v", code, out)
	}
	if _, err := os.Stat(filepath.Join(f.dir, ag.ID)); !os.IsNotExist(err) {
		t.Errorf("files left: %v", err)
	}
	var e map[string]any
	if code := f.do("GET", "/api/agents/"+ag.ID, "", nil, &e); code != 404 {
		t.Errorf("get after delete: %d", code)
	}
	if code := f.do("DELETE", "/api/agents/"+ag.ID, "", nil, &e); code != 404 {
		t.Errorf("delete again: %d", code)
	}
	f.reopen()
	if code := f.do("GET", "/api/agents/"+ag.ID, "", nil, &e); code != 404 {
		t.Errorf("get after reopen: %d", code)
	}
	// The name is free again.
	f.create("name: doomed\n")

	for id, want := range map[string]string{
		"ag_default":        "read-only",
		"ag_profile_reader": filepath.Join(f.agents, "reader.md"),
	} {
		if code := f.do("DELETE", "/api/agents/"+id, "", nil, &e); code != 400 || !strings.Contains(errMsg(e), want) {
			t.Errorf("delete %s: %d %v", id, code, e)
		}
	}
	if _, err := os.Stat(filepath.Join(f.agents, "reader.md")); err != nil {
		t.Error(err)
	}
}

func TestAgentRejectedBundles(t *testing.T) {
	f := newAgentFixture(t)
	f.writeProfile("reader", "You read.\n", 1500)
	first := f.create("name: taken\n")
	big := make([]byte, agentTestMaxBundle+1)
	rand.Read(big)
	valid := bundletest.Config("name: cut\n")
	many := []bundletest.Entry{bundletest.File("config.yaml", "name: many\n")}
	for i := range bundle.MaxEntries {
		many = append(many, bundletest.File(fmt.Sprintf("f%d", i), ""))
	}
	link := func(typ byte) bundletest.Entry {
		return bundletest.Entry{Hdr: tar.Header{Name: "config.yaml", Typeflag: typ, Linkname: "/etc/passwd"}}
	}
	cfg := func(s string) []byte { return bundletest.Config(s) }
	for _, c := range []struct {
		name   string
		bundle []byte
		status int
		want   string
	}{
		{"not gzip", []byte("hello, not a tarball"), 400, "not a gzip file"},
		{"corrupt tar", bundletest.Gzip(bytes.Repeat([]byte("garbage!"), 200)), 400, "corrupt tar"},
		{"truncated", valid[:len(valid)-12], 400, "corrupt"},
		{"over max", big, 413, fmt.Sprintf("bundle is over %d bytes", agentTestMaxBundle)},
		{"absolute", bundletest.TarGz(bundletest.File("/etc/config.yaml", "name: x\n")), 400, "path traversal"},
		{"dotdot", bundletest.TarGz(bundletest.File("config.yaml", "name: x\n"), bundletest.File("a/../../evil", "")), 400, "path traversal"},
		{"backslash dotdot", bundletest.TarGz(bundletest.File(`..\evil`, "")), 400, "path traversal"},
		{"symlink", bundletest.TarGz(link(tar.TypeSymlink)), 400, "links are not allowed"},
		{"hardlink", bundletest.TarGz(link(tar.TypeLink)), 400, "links are not allowed"},
		{"device", bundletest.TarGz(bundletest.Entry{Hdr: tar.Header{Name: "tty", Typeflag: tar.TypeChar, Devmajor: 5}}), 400, "only files and directories"},
		{"fifo", bundletest.TarGz(bundletest.Entry{Hdr: tar.Header{Name: "fifo", Typeflag: tar.TypeFifo}}), 400, "only files and directories"},
		{"too many entries", bundletest.TarGz(many...), 400, "more than 1000 entries"},
		{"zip bomb", bundletest.TarGz(bundletest.File("config.yaml", "name: bomb\n"), bundletest.File("zeros", strings.Repeat("\x00", bundle.UnpackFactor*agentTestMaxBundle))), 400, "unpacks to over"},
		{"no config", bundletest.TarGz(bundletest.File("README.md", "hi")), 400, "no config.yaml"},
		{"config two dirs", bundletest.TarGz(bundletest.File("a/config.yaml", "name: x\n"), bundletest.File("b/x", "")), 400, "no config.yaml"},
		{"config too deep", bundletest.TarGz(bundletest.File("a/b/config.yaml", "name: x\n")), 400, "no config.yaml"},
		{"config is a dir", bundletest.TarGz(bundletest.Dir("config.yaml/")), 400, "no config.yaml"},
		{"config twice", bundletest.TarGz(bundletest.File("config.yaml", "name: x\n"), bundletest.File("./config.yaml", "name: y\n")), 400, "twice"},
		{"invalid yaml", cfg("name: [unclosed\n"), 400, "config.yaml"},
		{"not a mapping", cfg("- a\n- b\n"), 400, "config.yaml"},
		{"unknown key", cfg("name: x\ncolour: red\n"), 400, "colour"},
		{"two documents", cfg("name: x\n---\nname: y\n"), 400, "one YAML document"},
		{"empty config", cfg(""), 400, "empty"},
		{"no name", cfg("description: nameless\n"), 400, "name is missing"},
		{"empty name", cfg("name: \"\"\n"), 400, "name is missing"},
		{"bad name", cfg("name: -dash\n"), 400, "must match"},
		{"name with space", cfg("name: two words\n"), 400, "must match"},
		{"long name", cfg("name: " + strings.Repeat("n", 65) + "\n"), 400, "must match"},
		{"negative iterations", cfg("name: x\nmax_iterations: -1\n"), 400, "max_iterations"},
		{"bad iterations", cfg("name: x\nmax_iterations: many\n"), 400, "config.yaml"},
		{"empty tool", cfg("name: x\ntools: [a, \"\"]\n"), 400, "tools[1] is empty"},
		{"validator", cfg("name: x\nmodel: nope\n"), 400, `model "nope": no such model`},
		{"duplicate", cfg("name: taken\n"), 409, `an agent named "taken" exists (id ` + first.ID + ")"},
		{"default's name", cfg("name: openheim\n"), 409, "(id ag_default)"},
		{"profile's name", cfg("name: reader\n"), 409, "(id ag_profile_reader)"},
	} {
		var e map[string]any
		code := f.upload("bundle", c.bundle, &e)
		if code != c.status || !strings.Contains(errMsg(e), c.want) {
			t.Errorf("%s: %d %q, want %d with %q", c.name, code, errMsg(e), c.status, c.want)
		}
	}

	var e map[string]any
	if code := f.upload("file", bundletest.Config("name: x\n"), &e); code != 400 || errMsg(e) != "missing bundle part" {
		t.Errorf("missing part: %d %v", code, e)
	}
	if code := f.do("POST", "/api/agents", "application/json", []byte(`{"name":"x"}`), &e); code != 400 || !strings.Contains(errMsg(e), "multipart") {
		t.Errorf("not multipart: %d %v", code, e)
	}
	huge := make([]byte, agentTestMaxBundle+bundleFormSlack+1)
	if code := f.upload("bundle", huge, &e); code != 400 && code != http.StatusRequestEntityTooLarge {
		t.Errorf("body over the limit: %d %v", code, e)
	}
	var l List[Agent]
	f.do("GET", "/api/agents", "", nil, &l)
	if len(l.Data) != 3 {
		t.Errorf("rejected bundles were stored: %d agents", len(l.Data))
	}
	if entries, _ := os.ReadDir(f.dir); len(entries) != 1 {
		t.Errorf("left on disk: %d entries", len(entries))
	}
}

func TestAgentConcurrentSameName(t *testing.T) {
	f := newAgentFixture(t)
	const n = 8
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			var out map[string]any
			codes[i] = f.upload("bundle", bundletest.Config("name: racer\n"), &out)
		})
	}
	wg.Wait()
	created := 0
	for _, c := range codes {
		switch c {
		case 201:
			created++
		case 409:
		default:
			t.Errorf("status %d", c)
		}
	}
	if created != 1 {
		t.Errorf("%d uploads created the agent: %v", created, codes)
	}
	if entries, _ := os.ReadDir(f.dir); len(entries) != 1 {
		t.Errorf("%d agent directories", len(entries))
	}
}
