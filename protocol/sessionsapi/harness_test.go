package sessionsapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/history"
	"github.com/openheim/openheim/runtime/live"
	"github.com/openheim/openheim/runtime/llm/llmtest"
	"github.com/openheim/openheim/runtime/session"
)

// fixture is the sessions API over a real engine, store and hub, with a
// scripted fake LLM.
type fixture struct {
	t    testing.TB
	llm  *llmtest.Server
	api  *API
	hub  *live.Hub
	srv  *httptest.Server
	work string
	home string
}

func newFixture(t testing.TB, extraConfig string, tune ...func(*Options)) *fixture {
	t.Helper()
	llm := llmtest.New()
	t.Cleanup(llm.Close)
	home := t.TempDir()
	work := filepath.Join(home, "work")
	os.MkdirAll(work, 0o755)
	path := filepath.Join(home, "config.toml")
	os.WriteFile(path, []byte(`default_provider = "fake"
work_dir = "`+work+`"
[providers.fake]
api_base = "`+llm.URL()+`"
default_model = "m1"
models = ["m1", "m2"]
`+strings.ReplaceAll(extraConfig, `"LLM"`, `"`+llm.URL()+`"`)), 0o600)
	cfg, err := config.LoadWith(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	store, err := session.NewFileStore(filepath.Join(home, "history"))
	if err != nil {
		t.Fatal(err)
	}
	catalog := &history.Catalog{Store: store, IndexDir: filepath.Join(home, "index", "sessions")}
	tracked := &history.Tracked{Store: store, Catalog: catalog}
	eng := &engine.Engine{Config: cfg, Store: tracked, Locker: &session.Locker{Dir: store.Dir}}
	hub := live.NewHub(context.Background(), eng)
	opts := Options{Engine: eng, Hub: hub, Store: tracked, Catalog: catalog, DataDir: home, Heartbeat: time.Hour}
	for _, f := range tune {
		f(&opts)
	}
	api, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	api.Register(mux, bodyLimit)
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		api.Close()
		srv.Close()
		hub.Stop()
	})
	return &fixture{t: t, llm: llm, api: api, hub: hub, srv: srv, work: work, home: home}
}

// bodyLimit is a Limit with the body limit only, as the server's applies it.
func bodyLimit(h http.Handler, max int64, _ bool) http.Handler { return http.MaxBytesHandler(h, max) }

// do sends a JSON request and decodes the JSON answer into out (if not
// nil); it returns the status.
func (f *fixture) do(method, path string, body any, out any) int {
	f.t.Helper()
	var rd io.Reader
	if body != nil {
		data, _ := json.Marshal(body)
		rd = bytes.NewReader(data)
	}
	req, _ := http.NewRequest(method, f.srv.URL+path, rd)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			f.t.Fatalf("%s %s: %v: %s", method, path, err, data)
		}
	}
	return resp.StatusCode
}

// create makes a session and returns its snapshot.
func (f *fixture) create(body map[string]any) map[string]any {
	f.t.Helper()
	var snap map[string]any
	if code := f.do("POST", "/v1/sessions", body, &snap); code != 201 {
		f.t.Fatalf("create: %d %v", code, snap)
	}
	return snap
}

// sseEvent is one event read from a stream.
type sseEvent struct {
	Name string
	Data map[string]any
	Done bool // data: [DONE]
}

// stream is an open SSE stream.
type stream struct {
	t      testing.TB
	resp   *http.Response
	mu     sync.Mutex
	events []sseEvent
	closed chan struct{}
}

func (f *fixture) stream(conv string) *stream {
	f.t.Helper()
	resp, err := http.Get(f.srv.URL + "/v1/sessions/" + conv + "/stream")
	if err != nil {
		f.t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		f.t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	s := &stream{t: f.t, resp: resp, closed: make(chan struct{})}
	go s.read()
	f.t.Cleanup(func() { resp.Body.Close() })
	return s
}

func (s *stream) read() {
	defer close(s.closed)
	sc := bufio.NewScanner(s.resp.Body)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var name string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case line == "data: [DONE]":
			s.add(sseEvent{Done: true})
		case strings.HasPrefix(line, "data: "):
			var data map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &data); err != nil {
				s.t.Errorf("stream data is not JSON: %q", line)
			}
			if data["type"] != name {
				s.t.Errorf("event %q carries type %v", name, data["type"])
			}
			s.add(sseEvent{Name: name, Data: data})
		}
	}
}

func (s *stream) add(e sseEvent) {
	s.mu.Lock()
	s.events = append(s.events, e)
	s.mu.Unlock()
}

func (s *stream) all() []sseEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sseEvent(nil), s.events...)
}

// waitFor waits until an event satisfies match and returns it.
func (s *stream) waitFor(what string, match func(sseEvent) bool) sseEvent {
	s.t.Helper()
	return s.waitNth(what, 1, match)
}

// waitNth waits for the n-th (1-based) event that satisfies match.
func (s *stream) waitNth(what string, n int, match func(sseEvent) bool) sseEvent {
	s.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		seen := 0
		for _, e := range s.all() {
			if match(e) {
				if seen++; seen == n {
					return e
				}
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.t.Fatalf("no %s (#%d) on the stream; got %v", what, n, s.names())
	return sseEvent{}
}

// waitName waits for the n-th (1-based) event of that name.
func (s *stream) waitName(name string, n int) sseEvent {
	s.t.Helper()
	return s.waitNth(name, n, func(e sseEvent) bool { return e.Name == name })
}

func (s *stream) names() []string {
	var out []string
	for _, e := range s.all() {
		if e.Done {
			out = append(out, "[DONE]")
		} else if e.Name == "session.status" {
			out = append(out, e.Name+":"+e.Data["status"].(string))
		} else {
			out = append(out, e.Name)
		}
	}
	return out
}

// idle waits for the n-th idle status after the stream opened.
func (s *stream) idle(n int) {
	s.t.Helper()
	s.waitNth("session.status idle", n, func(e sseEvent) bool { return e.Name == "session.status" && e.Data["status"] == "idle" })
}

func at(m map[string]any, path ...string) any {
	var v any = m
	for _, p := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[p]
	}
	return v
}

// id is the full id of an item or response of session conv, written short
// in tests: id(conv, "fc_1_0") is "fc_<conv's uuid hex>_1_0".
func id(conv, short string) string {
	kind, pos, _ := strings.Cut(short, "_")
	return kind + "_" + string(idsOf(strings.TrimPrefix(conv, "conv_"))) + "_" + pos
}

// errMsg is the message of an error answer ({"error": {"code", "message"}});
// "" when the body is not one.
func errMsg(body map[string]any) string {
	msg, _ := at(body, "error", "message").(string)
	return msg
}

// errCode is the code of an error answer.
func errCode(body map[string]any) string {
	code, _ := at(body, "error", "code").(string)
	return code
}

// waitUntil waits (up to 10 s) for cond.
func waitUntil(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
