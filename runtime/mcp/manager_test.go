package mcp

// Manager tests against the in-process Go server over streamable HTTP.

import (
	"context"
	"encoding/json"
	"net"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/tools"
)

func httpConfig(url string) *config.MCPServer {
	return &config.MCPServer{URL: url, ToolTimeoutSecs: 30, StartupTimeoutSecs: 10}
}

func startWait(t *testing.T, m *Manager) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	m.Start(ctx)
	m.Wait(ctx)
}

func TestToolsNamesAndCalls(t *testing.T) {
	checkGoroutines(t)
	h := newHTTPServer(t)
	m := newManager(t, map[string]*config.MCPServer{"t": httpConfig(h.url())}, nil, nil)
	startWait(t, m)

	names := toolNames(m)
	byName := map[string]tools.Tool{}
	for _, tool := range m.Tools() {
		byName[tool.Spec().Name] = tool
	}
	if len(byName) != len(names) {
		t.Fatalf("duplicate names: %v", names)
	}
	for _, n := range names {
		if !safeName.MatchString(n) {
			t.Errorf("unsafe name %q", n)
		}
	}
	for _, want := range []string{"t__echo", "t__args", "t__do_thing_x", "t__a_b", "t__look"} {
		if byName[want] == nil {
			t.Errorf("no tool %q among %v", want, names)
		}
	}
	// "a_b" keeps the clean name; "a.b", which would collide, gets a hash.
	if got := byName["t__a_b"].(*ToolAdapter).RawName(); got != "a_b" {
		t.Errorf("t__a_b maps to %q, want a_b", got)
	}
	var dotted, long string
	for n, tool := range byName {
		switch tool.(*ToolAdapter).RawName() {
		case "a.b":
			dotted = n
		case longToolName:
			long = n
		}
	}
	if !regexp.MustCompile(`^t__a_b_[0-9a-f]{8}$`).MatchString(dotted) || len(long) != 64 {
		t.Errorf("collision name %q, long name %q (%d)", dotted, long, len(long))
	}
	for name, raw := range map[string]string{"t__do_thing_x": "do.thing/x", dotted: "a.b", long: longToolName} {
		if r := runTool(t, m, name, `{}`); r.IsError || r.Content != raw+" ran" {
			t.Errorf("%s: %+v", name, r)
		}
	}
	if !slices.Equal(names, toolNames(m)) {
		t.Error("names must be stable between calls")
	}

	echo := byName["t__echo"]
	if echo.Kind() != tools.KindOther || byName["t__look"].Kind() != tools.KindRead {
		t.Errorf("kinds: echo %s, look %s", echo.Kind(), byName["t__look"].Kind())
	}
	spec := echo.Spec()
	if spec.Description != "Echoes the message." || !strings.Contains(string(spec.Parameters), `"message":{"type":"string"}`) {
		t.Errorf("spec %+v / %s", spec, spec.Parameters)
	}
	if p := string(byName["t__do_thing_x"].Spec().Parameters); p != `{"properties":{},"type":"object"}` {
		t.Errorf("schema without properties: %s", p)
	}

	for _, tt := range []struct{ tool, args, want string }{
		{"t__echo", `{"message":"hi"}`, "hi"},
		{"t__add", `{"a":2,"b":3.5}`, "5.5"},
		{"t__args", ``, "{}"},
		{"t__args", `null`, "{}"},
		{"t__args", `{"n":12345678901234567890}`, `{"n":12345678901234567890}`},
		{"t__structured", `{}`, `{"n":7}`},
		{"t__mixed", `{}`, "[audio: audio/wav, 4 bytes, not shown]\n[resource link: file:///a.txt (a.txt), text/plain]\n" +
			"[resource file:///b.txt]\nbee\n[resource file:///c.bin: application/octet-stream, 3 bytes, not shown]"},
	} {
		if r := runTool(t, m, tt.tool, tt.args); r.IsError || r.Content != tt.want {
			t.Errorf("%s %s = %+v, want %q", tt.tool, tt.args, r, tt.want)
		}
	}
	if r := runTool(t, m, "t__image", `{}`); r.IsError || r.Content != "a pixel" || len(r.Images) != 1 ||
		r.Images[0].MimeType != "image/png" || r.Images[0].Data != "iVBORyBmYWtl" {
		t.Errorf("image: %+v", r)
	}
	if r := runTool(t, m, "t__fail", `{}`); !r.IsError || r.Content != "it failed" {
		t.Errorf("fail: %+v", r)
	}
	if r := runTool(t, m, "t__echo", `[1]`); !r.IsError || !strings.Contains(r.Content, "JSON object") {
		t.Errorf("array arguments: %+v", r)
	}
}

func TestCallErrors(t *testing.T) {
	checkGoroutines(t)
	h := newHTTPServer(t)
	cfg := httpConfig(h.url())
	cfg.DisabledTools = []string{"fail"}
	m := newManager(t, map[string]*config.MCPServer{"t": cfg}, nil, nil)
	startWait(t, m)
	ctx := context.Background()

	// A Go server answers an unknown tool with a protocol error.
	r, err := m.Call(ctx, "t", "nope", nil)
	if err != nil || !r.IsError || !strings.Contains(r.Content, `nope`) || !strings.HasPrefix(r.Content, "MCP error ") {
		t.Errorf("unknown tool: %+v, %v", r, err)
	}
	// Nil arguments go out as {}.
	if r, err = m.Call(ctx, "t", "args", nil); err != nil || r.Content != "{}" {
		t.Errorf("nil arguments: %+v, %v", r, err)
	}
	if r, err = m.Call(ctx, "t", "fail", nil); err == nil || !r.IsError || !strings.Contains(r.Content, "disabled") {
		t.Errorf("disabled tool: %+v, %v", r, err)
	}
	if r, err = m.Call(ctx, "nosuch", "echo", nil); err == nil || !r.IsError || !strings.Contains(r.Content, `unknown MCP server "nosuch"`) {
		t.Errorf("unknown server: %+v, %v", r, err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if r, err = m.Call(cctx, "t", "echo", nil); err == nil || !r.IsError {
		t.Errorf("cancelled: %+v, %v", r, err)
	}
	if _, err := m.ServerTools(ctx, "nosuch"); err == nil {
		t.Error("ServerTools of an unknown server: want an error")
	}
	if st := status(m, "t"); !st.Connected || st.Error != nil {
		t.Errorf("call errors must not disconnect: %+v", st)
	}
}

func TestFiltersAndServerTools(t *testing.T) {
	checkGoroutines(t)
	h := newHTTPServer(t)
	cfg := httpConfig(h.url())
	cfg.EnabledTools = []string{"echo", "a*"}
	cfg.DisabledTools = []string{"a.b"}
	m := newManager(t, map[string]*config.MCPServer{"t": cfg}, nil, nil)
	// ServerTools connects by itself, without Start.
	list, err := m.ServerTools(context.Background(), "t")
	if err != nil {
		t.Fatal(err)
	}
	var raw []string
	for _, tool := range list {
		raw = append(raw, tool.Name)
	}
	slices.Sort(raw)
	if want := []string{"a_b", "add", "args", "echo"}; !slices.Equal(raw, want) {
		t.Errorf("filtered tools %v, want %v", raw, want)
	}
	if got := toolNames(m); !slices.Equal(got, []string{"t__a_b", "t__add", "t__args", "t__echo"}) {
		t.Errorf("offered %v", got)
	}
	if st := status(m, "t"); st.ToolCount != 4 || !st.Connected {
		t.Errorf("status %+v", st)
	}
}

func TestStatusJSON(t *testing.T) {
	checkGoroutines(t)
	h := newHTTPServer(t)
	cfg := httpConfig(strings.Replace(h.url(), "http://", "http://user:pw@", 1) + "?key=secret")
	cfg.Headers = map[string]string{"Authorization": "Bearer secret-token"}
	m := newManager(t, map[string]*config.MCPServer{
		"web":  cfg,
		"down": {Command: "openheim-test-no-such-command", Args: []string{"--token=secret"}, Env: map[string]string{"K": "secret-env"}, StartupTimeoutSecs: 5},
		"idle": {Command: "true"},
		"bad":  nil,
	}, nil, nil)
	startWait(t, m)
	b, err := json.Marshal(m.Status())
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	wantPrefix := `[{"name":"bad","transport":"unknown","command":null,"url":null,"connected":false,"tool_count":0,"error":"neither command nor url is configured"},` +
		`{"name":"down","transport":"stdio","command":"openheim-test-no-such-command","url":null,"connected":false,"tool_count":0,"error":"cannot start \"openheim-test-no-such-command\": executable file not found in $PATH"},` +
		`{"name":"idle","transport":"stdio","command":"true","url":null,"connected":false,"tool_count":0,"error":`
	if !strings.HasPrefix(got, wantPrefix) {
		t.Errorf("status JSON:\n%s\nwant prefix:\n%s", got, wantPrefix)
	}
	wantWeb := `{"name":"web","transport":"http","command":null,"url":"` + h.url() + `","connected":true,"tool_count":14,"error":null}]`
	if !strings.HasSuffix(got, wantWeb) {
		t.Errorf("status JSON:\n%s\nwant suffix:\n%s", got, wantWeb)
	}
	if strings.Contains(got, "secret") || strings.Contains(got, "pw") {
		t.Errorf("status leaks a secret: %s", got)
	}
	// Every request carried the configured header, the credentials in the
	// URL did not leak into it and the query was kept on the wire.
	hs := h.requestHeaders()
	if len(hs) < 3 {
		t.Fatalf("only %d requests", len(hs))
	}
	for _, hd := range hs {
		if hd.Get("Authorization") != "Bearer secret-token" {
			t.Errorf("request without the configured header: %v", hd)
		}
	}
}

func TestToolTimeoutAndClose(t *testing.T) {
	checkGoroutines(t)
	h := newHTTPServer(t)
	cfg := httpConfig(h.url())
	cfg.ToolTimeoutSecs = 1
	m := newManager(t, map[string]*config.MCPServer{"t": cfg}, nil, nil)
	startWait(t, m)

	start := time.Now()
	r, err := m.Call(context.Background(), "t", "sleep", json.RawMessage(`{"ms":30000}`))
	took := time.Since(start)
	if err == nil || !r.IsError || !strings.Contains(r.Content, "timed out after 1s") || took > 3*time.Second {
		t.Errorf("timeout: %+v, %v after %s", r, err, took)
	}
	select {
	case <-h.ev.cancelled: // the SDK sent notifications/cancelled
	case <-time.After(3 * time.Second):
		t.Error("the server never saw the call cancelled")
	}
	if r, err := m.Call(context.Background(), "t", "echo", json.RawMessage(`{"message":"still"}`)); err != nil || r.Content != "still" {
		t.Errorf("after a timeout the session must still work: %+v, %v", r, err)
	}

	// Close during a call: the call ends at once, and so does Close.
	cfg.ToolTimeoutSecs = 60
	done := make(chan error, 1)
	go func() {
		_, err := m.Call(context.Background(), "t", "sleep", json.RawMessage(`{"ms":30000}`))
		done <- err
	}()
	time.Sleep(200 * time.Millisecond)
	start = time.Now()
	m.Close()
	m.Close() // idempotent
	select {
	case err := <-done:
		if err == nil {
			t.Error("a call cut by Close must fail")
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the call outlived Close")
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Close took %s", took)
	}
	if r, err := m.Call(context.Background(), "t", "echo", nil); err == nil || !r.IsError {
		t.Errorf("call after Close: %+v, %v", r, err)
	}
	if st := status(m, "t"); st.Connected {
		t.Errorf("connected after Close: %+v", st)
	}
}

func TestHTTPReconnect(t *testing.T) {
	checkGoroutines(t)
	h := newHTTPServer(t)
	w := &warnings{}
	m := newManager(t, map[string]*config.MCPServer{"t": httpConfig(h.url())}, w, nil)
	// Long enough that a loaded machine still makes the second call
	// within it; the test sleeps until it is over, not for a guess.
	m.backoff = 2 * time.Second
	startWait(t, m)
	echo := func() (tools.Result, error) {
		return m.Call(context.Background(), "t", "echo", json.RawMessage(`{"message":"x"}`))
	}

	// A restarted server no longer knows the session: the call reconnects
	// and succeeds, because the server refused the request unprocessed.
	h.stop()
	h.start()
	time.Sleep(200 * time.Millisecond) // idle keep-alive connections notice the stop
	if r, err := echo(); err != nil || r.Content != "x" {
		t.Fatalf("after a restart: %+v, %v", r, err)
	}

	// Restarted just now: the call may have gone out on a keep-alive
	// connection the old server closed (EOF: it may have been processed, so
	// it is not retried); the next call reconnects.
	h.stop()
	h.start()
	if r, err := echo(); err != nil && !strings.Contains(r.Content, "the connection broke during the call") {
		t.Fatalf("just after a restart: %+v, %v", r, err)
	}
	if r, err := echo(); err != nil || r.Content != "x" {
		t.Fatalf("the call after: %+v, %v", r, err)
	}

	// A stopped server: the call fails (never sent, retried, refused), and
	// so does the next one within the back-off, without trying.
	h.stop()
	time.Sleep(200 * time.Millisecond)
	r, err := echo()
	if err == nil || !strings.Contains(r.Content, "cannot reach "+h.url()) {
		t.Fatalf("stopped: %+v, %v", r, err)
	}
	st := status(m, "t")
	if st.Connected || st.Error == nil || !strings.Contains(*st.Error, "connection refused") || st.ToolCount != 14 {
		t.Errorf("status while down: %+v", st)
	}
	if len(toolNames(m)) != 14 {
		t.Error("the tools stay offered while the server is down")
	}
	r, _ = echo()
	if !retryIn.MatchString(r.Content) {
		t.Errorf("within the back-off: %q", r.Content)
	}
	if n := len(w.get()); n != 1 {
		t.Errorf("%d warnings, want 1: %v", n, w.get())
	}

	h.start()
	pastBackoff(m, "t")
	if r, err := echo(); err != nil || r.Content != "x" {
		t.Fatalf("after the back-off: %+v, %v", r, err)
	}
	if st := status(m, "t"); !st.Connected || st.Error != nil {
		t.Errorf("status after reconnecting: %+v", st)
	}
}

func TestRefusedURL(t *testing.T) {
	checkGoroutines(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/mcp"
	ln.Close()
	w := &warnings{}
	m := newManager(t, map[string]*config.MCPServer{"gone": httpConfig(url)}, w, nil)
	startWait(t, m)
	st := status(m, "gone")
	if st.Connected || st.Error == nil || *st.Error != "cannot reach "+url+": connect: connection refused" {
		t.Errorf("status %+v (error %v)", st, deref(st.Error))
	}
	if got := w.get(); len(got) != 1 || !strings.HasPrefix(got[0], "gone: cannot reach") {
		t.Errorf("warnings %v", got)
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

func TestToolListChanged(t *testing.T) {
	checkGoroutines(t)
	h := newHTTPServer(t)
	m := newManager(t, map[string]*config.MCPServer{"t": httpConfig(h.url())}, nil, nil)
	startWait(t, m)
	h.mu.Lock()
	srv := h.mcpSrv
	h.mu.Unlock()
	srv.AddTool(&mcp.Tool{Name: "late", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "late ran"}}}, nil
		})
	waitFor(t, 5*time.Second, "the new tool to be offered", func() bool {
		return slices.Contains(toolNames(m), "t__late")
	})
	if r := runTool(t, m, "t__late", `{}`); r.Content != "late ran" {
		t.Errorf("late: %+v", r)
	}
	if st := status(m, "t"); st.ToolCount != 15 {
		t.Errorf("status %+v", st)
	}
}
