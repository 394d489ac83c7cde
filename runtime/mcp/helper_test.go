package mcp

// Test fixtures: a Go MCP server (go-sdk) served over stdio by this very test
// binary (re-executed with serverEnv set) or over HTTP in-process, a
// goroutine-leak check, and manager helpers.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/tools"
)

// serverEnv turns the test binary into an MCP server on stdio. Its value is
// the mode: "ok" serves testServer; "hang" never answers initialize; "exit"
// prints a line with $TEST_TOKEN to stderr and exits 3; "args" prints its
// args, $TEST_TOKEN and $TEST_INHERITED to stderr and exits 3.
const serverEnv = "OPENHEIM_MCP_TEST_SERVER"

// Optional: a file the server appends its pid to on every start; for mode
// "ok", a file whose existence makes the start fail and "1" to spawn a
// sleeping grandchild.
const (
	startsEnv     = "OPENHEIM_MCP_TEST_STARTS"
	failFileEnv   = "OPENHEIM_MCP_TEST_FAILFILE"
	grandchildEnv = "OPENHEIM_MCP_TEST_GRANDCHILD"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(serverEnv); mode != "" {
		os.Exit(runTestServer(mode))
	}
	os.Exit(m.Run())
}

func runTestServer(mode string) int {
	if f := os.Getenv(startsEnv); f != "" {
		if fh, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintln(fh, os.Getpid())
			fh.Close()
		}
	}
	switch mode {
	case "hang":
		fmt.Fprintln(os.Stderr, "hanging: never answering")
		_, _ = io.Copy(io.Discard, os.Stdin)
		return 0
	case "exit":
		fmt.Fprintln(os.Stderr, "fatal: bad token "+os.Getenv("TEST_TOKEN"))
		return 3
	case "args": // a server that quotes its command line and env, then dies
		fmt.Fprintln(os.Stderr, "starting with", strings.Join(os.Args[1:], " "), "env", os.Getenv("TEST_TOKEN"), os.Getenv("TEST_INHERITED"))
		fmt.Fprintln(os.Stderr, "fatal: usage: server", strings.Join(os.Args[1:], " "), os.Getenv("TEST_TOKEN"), os.Getenv("TEST_INHERITED"))
		return 3
	}
	if f := os.Getenv(failFileEnv); f != "" {
		if _, err := os.Stat(f); err == nil {
			fmt.Fprintln(os.Stderr, "refusing to start: fail file present")
			return 3
		}
	}
	if os.Getenv(grandchildEnv) == "1" {
		if err := exec.Command("sleep", "300").Start(); err != nil {
			fmt.Fprintln(os.Stderr, "grandchild:", err)
		}
	}
	fmt.Fprintln(os.Stderr, "test server ready")
	if err := newTestServer(nil).Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		return 1
	}
	return 0
}

// longToolName is 80 characters: its prefixed name must be cut with a hash.
var longToolName = strings.Repeat("very_long_tool_name_", 4)

// serverEvents receives what the in-process server's handlers see.
type serverEvents struct {
	cancelled chan string // tool names whose handler saw its context end
}

// newTestServer builds the Go MCP server the tests talk to.
func newTestServer(ev *serverEvents) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ServerOptions{
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	obj := func(props string) json.RawMessage {
		return json.RawMessage(`{"type":"object","properties":{` + props + `}}`)
	}
	text := func(format string, a ...any) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, a...)}}}
	}
	args := func(req *mcp.CallToolRequest) map[string]any {
		var m map[string]any
		_ = json.Unmarshal(req.Params.Arguments, &m)
		return m
	}
	add := func(name, desc string, schema json.RawMessage, h mcp.ToolHandler) {
		s.AddTool(&mcp.Tool{Name: name, Description: desc, InputSchema: schema}, h)
	}
	add("echo", "Echoes the message.", obj(`"message":{"type":"string"}`), func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("%v", args(req)["message"]), nil
	})
	add("args", "Returns the raw arguments.", obj(""), func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("%s", req.Params.Arguments), nil
	})
	add("add", "Adds a and b.", obj(`"a":{"type":"number"},"b":{"type":"number"}`), func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a := args(req)
		x, _ := a["a"].(float64)
		y, _ := a["b"].(float64)
		return text("%g", x+y), nil
	})
	add("pid", "The server's process id.", obj(""), func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("%d", os.Getpid()), nil
	})
	add("sleep", "Sleeps ms milliseconds.", obj(`"ms":{"type":"number"}`), func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ms, _ := args(req)["ms"].(float64)
		if ev == nil { // on stdio: the manager logs it, so a test sees the call arrive
			fmt.Fprintln(os.Stderr, "sleeping")
		}
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
			return text("slept"), nil
		case <-ctx.Done():
			if ev != nil {
				ev.cancelled <- "sleep"
			}
			return nil, ctx.Err()
		}
	})
	add("image", "An image.", obj(""), func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: "a pixel"},
			&mcp.ImageContent{Data: []byte("\x89PNG fake"), MIMEType: "image/png"},
		}}, nil
	})
	add("structured", "Only structured content.", obj(""), func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{}, StructuredContent: map[string]any{"n": 7}}, nil
	})
	add("fail", "Fails.", obj(""), func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		r := text("it failed")
		r.IsError = true
		return r, nil
	})
	add("mixed", "Every other part.", obj(""), func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.AudioContent{Data: []byte("RIFF"), MIMEType: "audio/wav"},
			&mcp.ResourceLink{URI: "file:///a.txt", Name: "a.txt", MIMEType: "text/plain"},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///b.txt", Text: "bee"}},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///c.bin", MIMEType: "application/octet-stream", Blob: []byte{1, 2, 3}}},
		}}, nil
	})
	s.AddTool(&mcp.Tool{Name: "look", Description: "Reads only.", InputSchema: obj(""),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("looked"), nil })
	for _, name := range []string{"do.thing/x", "a.b", "a_b", longToolName} {
		add(name, "Odd name.", json.RawMessage(`{"type":"object"}`), func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("%s ran", name), nil
		})
	}
	return s
}

// httpServer serves the test MCP server over streamable HTTP on a fixed
// address, can stop (dropping every connection) and start again with fresh
// sessions, and records the headers of every request.
type httpServer struct {
	t    *testing.T
	addr string
	ev   *serverEvents

	mu      sync.Mutex
	srv     *http.Server
	mcpSrv  *mcp.Server
	headers []http.Header
}

func newHTTPServer(t *testing.T) *httpServer {
	h := &httpServer{t: t, addr: "127.0.0.1:0", ev: &serverEvents{cancelled: make(chan string, 10)}}
	h.start()
	t.Cleanup(h.stop)
	return h
}

func (h *httpServer) url() string { return "http://" + h.addr + "/mcp" }

func (h *httpServer) start() {
	h.t.Helper()
	var ln net.Listener
	var err error
	for range 50 { // the old socket may linger for a moment after a stop
		if ln, err = net.Listen("tcp", h.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		h.t.Fatal(err)
	}
	h.addr = ln.Addr().String()
	srv := newTestServer(h.ev)
	mh := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.headers = append(h.headers, r.Header.Clone())
		h.mu.Unlock()
		mh.ServeHTTP(w, r)
	})}
	h.mu.Lock()
	h.srv, h.mcpSrv = hs, srv
	h.mu.Unlock()
	go hs.Serve(ln)
}

func (h *httpServer) stop() {
	h.mu.Lock()
	srv, mcpSrv := h.srv, h.mcpSrv
	h.srv, h.mcpSrv = nil, nil
	h.mu.Unlock()
	if srv != nil {
		srv.Close()
		for ss := range mcpSrv.Sessions() { // a real server's sessions die with it
			ss.Close()
		}
	}
}

func (h *httpServer) requestHeaders() []http.Header {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.headers)
}

// stdioServer configures this test binary as a stdio MCP server in mode.
func stdioServer(t *testing.T, mode string, env map[string]string) *config.MCPServer {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// A -race binary sleeps 1 s at exit by default: not for a test server.
	e := map[string]string{serverEnv: mode, "GORACE": "atexit_sleep_ms=0"}
	for k, v := range env {
		e[k] = v
	}
	return &config.MCPServer{Command: exe, Env: e, ToolTimeoutSecs: 30, StartupTimeoutSecs: 10}
}

// warnings collects Options.Warn calls.
type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) warn(server string, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, server+": "+err.Error())
}

func (w *warnings) get() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.list)
}

// newManager builds a manager whose log goes to logs (may be nil), closed
// at the end of the test.
func newManager(t *testing.T, servers map[string]*config.MCPServer, w *warnings, logs io.Writer) *Manager {
	t.Helper()
	return newManagerOpts(t, servers, w, logs, Options{})
}

// newManagerOpts is newManager with more options (Log, Version and Warn
// are set here).
func newManagerOpts(t *testing.T, servers map[string]*config.MCPServer, w *warnings, logs io.Writer, opts Options) *Manager {
	t.Helper()
	if logs == nil {
		logs = io.Discard
	}
	opts.Log, opts.Version = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo})), "test"
	if w != nil {
		opts.Warn = w.warn
	}
	m := NewManager(servers, opts)
	t.Cleanup(func() { m.Close() })
	return m
}

// syncBuffer is a bytes.Buffer safe for concurrent use (log output).
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// checkGoroutines, called first in a test, fails it if once its other
// cleanups have run (this one runs last) goroutines of this package, the
// SDK or an HTTP client connection are still running.
func checkGoroutines(t *testing.T) {
	t.Helper()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for {
			left := leakedGoroutines()
			if len(left) == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("%d goroutines leaked:\n\n%s", len(left), strings.Join(left, "\n\n"))
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

func leakedGoroutines() []string {
	buf := make([]byte, 4<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "testing.tRunner") || strings.Contains(g, "leakedGoroutines") {
			continue
		}
		if strings.Contains(g, "openheim/runtime/mcp.") || strings.Contains(g, "modelcontextprotocol/go-sdk") ||
			strings.Contains(g, "net/http.(*persistConn)") {
			out = append(out, g)
		}
	}
	return out
}

// runTool calls a tool through the adapter Tools offers under name.
func runTool(t *testing.T, m *Manager, name, args string) tools.Result {
	t.Helper()
	for _, tool := range m.Tools() {
		if tool.Spec().Name == name {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			return tool.Run(ctx, json.RawMessage(args))
		}
	}
	t.Fatalf("no tool %q among %v", name, toolNames(m))
	return tools.Result{}
}

func toolNames(m *Manager) []string {
	var names []string
	for _, tool := range m.Tools() {
		names = append(names, tool.Spec().Name)
	}
	return names
}

// serverPid is the pid of a stdio server's live process, 0 if none.
func serverPid(m *Manager, name string) int {
	s := m.servers[name]
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess == nil || s.sess.st == nil || s.sess.st.process() == nil {
		return 0
	}
	return s.sess.st.process().cmd.Process.Pid
}

// pastBackoff sleeps until server name's back-off after its last failed
// connection attempt is over (the manager's own clock decides).
func pastBackoff(m *Manager, name string) {
	s := m.servers[name]
	s.mu.Lock()
	at := s.retryAt
	s.mu.Unlock()
	time.Sleep(time.Until(at) + 10*time.Millisecond)
}

// retryIn matches the back-off a failed server's error states, for a
// back-off of at most 2 s read any time before it ends.
var retryIn = regexp.MustCompile(`; next connection attempt in [12]s \(at \d\d:\d\d:\d\d\)`)

func status(m *Manager, name string) Status {
	for _, st := range m.Status() {
		if st.Name == name {
			return st
		}
	}
	return Status{}
}

// waitFor polls cond every 10 ms for up to d.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
