package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/history"
	"github.com/openheim/openheim/runtime/llm/llmtest"
	"github.com/openheim/openheim/runtime/session"
)

// fixture is a running server with a fake model behind it.
type fixture struct {
	srv   *Server
	eng   *engine.Engine
	llm   *llmtest.Server
	store *session.FileStore
	work  string
	addr  string // host:port
	token string // "" when authentication is off
	stop  func() // graceful shutdown, as on SIGTERM
}

// testToken is the fixtures' token unless a test names its own.
const testToken = "test-token-0123456789abcdefghij"

type setup struct {
	token     string // default testToken
	noAuth    bool   // --insecure-no-auth: no token at all
	extra     string // more config TOML
	sendQueue int
	maxFrame  int64
	// read and upload shorten the server's timeouts.
	read, upload time.Duration
	// sndbuf, when set, is the send buffer of every connection the
	// server accepts (SO_SNDBUF, so the kernel does not grow it).
	sndbuf int
}

// sndbufListener sets the send buffer of the connections it accepts.
type sndbufListener struct {
	net.Listener
	size int
}

func (l sndbufListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(l.size)
	}
	return c, err
}

func start(t *testing.T, s setup) *fixture {
	t.Helper()
	fake := llmtest.New()
	t.Cleanup(fake.Close)
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	work, _ = filepath.EvalSymlinks(work)
	path := filepath.Join(dir, "config.toml")
	cfgText := fmt.Sprintf("default_provider = \"fake\"\nwork_dir = %q\n%s\n[providers.fake]\napi_base = %q\ndefault_model = \"gpt-4-turbo\"\nmodels = [\"gpt-4-turbo\", \"gpt-4\"]\n",
		work, s.extra, fake.URL())
	if err := os.WriteFile(path, []byte(cfgText), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadWith(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	store, err := session.NewFileStore(filepath.Join(dir, "history"))
	if err != nil {
		t.Fatal(err)
	}
	eng := &engine.Engine{Config: cfg, Store: store, Locker: &session.Locker{Dir: store.Dir}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if s.sndbuf > 0 {
		l = sndbufListener{l, s.sndbuf}
	}
	catalog := &history.Catalog{Store: store, IndexDir: filepath.Join(dir, "index", "sessions")}
	if s.token == "" && !s.noAuth {
		s.token = testToken
	}
	srv, err := New(Options{Engine: eng, Catalog: catalog, Version: "0.1.0", Token: s.token, InsecureNoAuth: s.noAuth,
		Loopback: true, SendQueue: s.sendQueue, MaxFrame: s.maxFrame, DataDir: dir, ReadTimeout: s.read, UploadTimeout: s.upload})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, l, 10*time.Second) }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("shutdown: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Error("the server did not shut down")
		}
	}
	t.Cleanup(stop)
	return &fixture{srv: srv, eng: eng, llm: fake, store: store, work: work, addr: l.Addr().String(), token: s.token, stop: stop}
}

func (f *fixture) url(path string) string { return "http://" + f.addr + path }

// authed is header with the fixture's token added, unless header names an
// Authorization of its own.
func (f *fixture) authed(header http.Header) http.Header {
	h := header.Clone()
	if h == nil {
		h = http.Header{}
	}
	if _, ok := h["Authorization"]; !ok && f.token != "" {
		h.Set("Authorization", "Bearer "+f.token)
	}
	return h
}

// get fetches a REST path with the token; it returns the status and the
// body.
func (f *fixture) get(t *testing.T, path string, header http.Header) (int, []byte) {
	t.Helper()
	return f.getAnon(t, path, f.authed(header))
}

// getAnon is get without adding the token.
func (f *fixture) getAnon(t *testing.T, path string, header http.Header) (int, []byte) {
	t.Helper()
	return f.do(t, http.MethodGet, path, "", nil, header)
}

// do sends a request as is; it returns the status and the body.
func (f *fixture) do(t *testing.T, method, path, contentType string, body io.Reader, header http.Header) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, f.url(path), body)
	for k, v := range header {
		req.Header[k] = v
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// wsClient is a test WebSocket client.
type wsClient struct {
	t    *testing.T
	c    *websocket.Conn
	resp *http.Response
}

// dial opens a WebSocket with the token.
func (f *fixture) dial(t *testing.T, path string, header http.Header) (*wsClient, error) {
	t.Helper()
	return f.dialAnon(t, path, f.authed(header))
}

// dialAnon is dial without adding the token.
func (f *fixture) dialAnon(t *testing.T, path string, header http.Header) (*wsClient, error) {
	t.Helper()
	d := websocket.Dialer{HandshakeTimeout: 5 * time.Second}
	c, resp, err := d.Dial("ws://"+f.addr+path, header)
	if err != nil {
		return &wsClient{t: t, resp: resp}, err
	}
	t.Cleanup(func() { c.Close() })
	return &wsClient{t: t, c: c, resp: resp}, nil
}

func (f *fixture) mustDial(t *testing.T, path string) *wsClient {
	t.Helper()
	c, err := f.dial(t, path, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", path, err)
	}
	return c
}

// sendRaw writes one text frame.
func (c *wsClient) sendRaw(frame string) {
	c.t.Helper()
	if err := c.c.WriteMessage(websocket.TextMessage, []byte(frame)); err != nil {
		c.t.Fatal(err)
	}
}

// send writes an envelope.
func (c *wsClient) send(channel string, data any) {
	c.t.Helper()
	b, _ := json.Marshal(map[string]any{"channel": channel, "data": data})
	c.sendRaw(string(b))
}

// next reads one frame as JSON.
func (c *wsClient) next() map[string]any {
	c.t.Helper()
	c.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, b, err := c.c.ReadMessage()
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		c.t.Fatalf("frame %s: %v", b, err)
	}
	return m
}

// until reads frames until one satisfies ok and returns it with the ones
// read before it.
func (c *wsClient) until(ok func(map[string]any) bool) (map[string]any, []map[string]any) {
	c.t.Helper()
	var before []map[string]any
	for range 10000 {
		m := c.next()
		if ok(m) {
			return m, before
		}
		before = append(before, m)
	}
	c.t.Fatal("no matching frame")
	return nil, nil
}

// response matches the agent channel's answer to request id.
func response(id float64) func(map[string]any) bool {
	return func(m map[string]any) bool {
		d, _ := m["data"].(map[string]any)
		return m["channel"] == "agent" && d["id"] == id && d["method"] == nil
	}
}

// at walks a decoded JSON value by keys and indexes ("a.b.0.c").
func at(v any, path string) any {
	for _, k := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[k]
		case []any:
			var i int
			if _, err := fmt.Sscan(k, &i); err != nil || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}
