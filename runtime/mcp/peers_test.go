//go:build unix

package mcp

// Tests against the reference MCP servers from npm (testdata/mcp at the
// repo root, installed by .ci/run): server-everything over stdio and
// streamable HTTP, server-filesystem over stdio.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/tools"
)

// peerScript returns node and the path of a reference server's entry point,
// skipping the test when they are not installed (failing under CI).
func peerScript(t testing.TB, pkg string) (node, script string) {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "testdata", "mcp", "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	script = filepath.Join(dir, "@modelcontextprotocol", pkg, "dist", "index.js")
	node, err = exec.LookPath("node")
	if _, serr := os.Stat(script); err != nil || serr != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("node or %s is missing (run npm ci in testdata/mcp): %v %v", pkg, err, serr)
		}
		t.Skip("node or testdata/mcp/node_modules missing; run: npm ci --prefix testdata/mcp")
	}
	return node, script
}

func TestEverythingStdio(t *testing.T) {
	node, script := peerScript(t, "server-everything")
	checkGoroutines(t)
	quick := &config.MCPServer{Command: node, Args: []string{script}, ToolTimeoutSecs: 1, StartupTimeoutSecs: 20,
		EnabledTools: []string{"trigger-long-running-operation"}}
	m := newManager(t, map[string]*config.MCPServer{
		"everything": {Command: node, Args: []string{script}, ToolTimeoutSecs: 20, StartupTimeoutSecs: 20},
		"quick":      quick,
	}, nil, nil)
	m.backoff = 200 * time.Millisecond
	start := time.Now()
	startWait(t, m)
	t.Logf("two server-everything processes connected in %s", time.Since(start).Round(time.Millisecond))

	names := strings.Join(toolNames(m), " ")
	for _, want := range []string{"everything__echo", "everything__get-sum", "everything__get-tiny-image", "quick__trigger-long-running-operation"} {
		if !strings.Contains(names, want) {
			t.Errorf("no %s among %s", want, names)
		}
	}
	if strings.Contains(names, "quick__echo") {
		t.Error("enabled_tools not applied")
	}
	if r := runTool(t, m, "everything__echo", `{"message":"hello"}`); r.IsError || r.Content != "Echo: hello" {
		t.Errorf("echo: %+v", r)
	}
	if r := runTool(t, m, "everything__get-sum", `{"a":2,"b":3}`); r.IsError || !strings.Contains(r.Content, "5") {
		t.Errorf("get-sum: %+v", r)
	}
	r := runTool(t, m, "everything__get-tiny-image", `{}`)
	if r.IsError || len(r.Images) != 1 || r.Images[0].MimeType != "image/png" {
		t.Fatalf("get-tiny-image: %+v", r)
	}
	if png, err := base64.StdEncoding.DecodeString(r.Images[0].Data); err != nil || !strings.HasPrefix(string(png), "\x89PNG") {
		t.Errorf("image data is not a base64 PNG: %v", err)
	}
	// The TypeScript server answers an unknown tool with an isError result.
	if r, err := m.Call(context.Background(), "everything", "nope", nil); err != nil || !r.IsError {
		t.Errorf("unknown tool: %+v, %v", r, err)
	}

	start = time.Now()
	r = runTool(t, m, "quick__trigger-long-running-operation", `{"duration":30,"steps":10}`)
	if took := time.Since(start); !r.IsError || !strings.Contains(r.Content, "timed out after 1s") || took > 3*time.Second {
		t.Errorf("long operation with a 1 s timeout: %+v after %s", r, took)
	}

	// The process group killed in the middle of a call: that call fails,
	// the next one reconnects and works.
	pid := serverPid(m, "everything")
	var wg sync.WaitGroup
	var cut tools.Result
	start = time.Now()
	wg.Go(func() {
		cut = runTool(t, m, "everything__trigger-long-running-operation", `{"duration":20,"steps":20}`)
	})
	time.Sleep(500 * time.Millisecond)
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	wg.Wait()
	t.Logf("cut call returned %s after the kill", time.Since(start).Round(time.Millisecond))
	if !cut.IsError || !strings.Contains(cut.Content, "the connection broke during the call") {
		t.Errorf("the call cut by the kill: %+v", cut)
	}
	if r := runTool(t, m, "everything__echo", `{"message":"again"}`); r.IsError || r.Content != "Echo: again" {
		t.Errorf("after the kill: %+v", r)
	}
	pid2 := serverPid(m, "everything")
	if pid2 == pid || pid2 == 0 {
		t.Errorf("not a new server process: %d then %d", pid, pid2)
	}

	pids := []int{pid, pid2, serverPid(m, "quick")}
	start = time.Now()
	m.Close()
	t.Logf("Close took %s", time.Since(start).Round(time.Millisecond))
	for _, p := range pids {
		waitFor(t, 2*time.Second, fmt.Sprintf("process group %d to be empty after Close", p), func() bool {
			return len(groupMembers(t, p)) == 0
		})
	}
}

// everythingHTTP runs server-everything over streamable HTTP on port,
// bound to 127.0.0.1 by a preloaded listen patch; stop kills it.
func everythingHTTP(t testing.TB, node, script string, port int) (stop func()) {
	t.Helper()
	patch, _ := filepath.Abs(filepath.Join("testdata", "listen-loopback.cjs"))
	cmd := exec.Command(node, "--require", patch, script, "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()
		})
	}
	t.Cleanup(stop)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	waitFor(t, 15*time.Second, "server-everything to listen on "+addr, func() bool {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	// Bound to loopback only: /proc/net/tcp lists 0100007F:<port>.
	if b, err := os.ReadFile("/proc/net/tcp"); err == nil && !strings.Contains(string(b), fmt.Sprintf("0100007F:%04X 00000000:0000 0A", port)) {
		t.Errorf("server-everything is not listening on 127.0.0.1 only")
	}
	return stop
}

func freePort(t testing.TB) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func TestEverythingHTTP(t *testing.T) {
	node, script := peerScript(t, "server-everything")
	checkGoroutines(t)
	port := freePort(t)
	stop := everythingHTTP(t, node, script, port)
	direct := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)

	// A reverse proxy in front records the headers that arrive.
	var mu sync.Mutex
	var seen []string
	target, _ := url.Parse(direct)
	rp := &httputil.ReverseProxy{FlushInterval: -1, ErrorLog: log.New(io.Discard, "", 0), Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.URL.Path = target.Path
		mu.Lock()
		seen = append(seen, r.In.Method+" "+r.In.Header.Get("X-Openheim-Test"))
		mu.Unlock()
	}}
	proxy := httptest.NewServer(rp)
	t.Cleanup(func() { proxy.CloseClientConnections(); proxy.Close() })

	proxied := httpConfig(proxy.URL + "/mcp")
	proxied.Headers = map[string]string{"X-Openheim-Test": "header-value-1"}
	m := newManager(t, map[string]*config.MCPServer{"direct": httpConfig(direct), "proxied": proxied}, nil, nil)
	m.backoff = 300 * time.Millisecond
	startWait(t, m)
	echo := func(server string) (tools.Result, error) {
		return m.Call(context.Background(), server, "echo", json.RawMessage(`{"message":"hi"}`))
	}
	for _, s := range []string{"direct", "proxied"} {
		if st := status(m, s); !st.Connected || st.ToolCount < 10 {
			t.Fatalf("%s: %+v (%s)", s, st, deref(st.Error))
		}
		if r, err := echo(s); err != nil || r.Content != "Echo: hi" {
			t.Errorf("%s echo: %+v, %v", s, r, err)
		}
	}
	if !strings.Contains(strings.Join(toolNames(m), " "), "proxied__get-sum") {
		t.Errorf("tools %v", toolNames(m))
	}
	mu.Lock()
	for _, s := range seen {
		if !strings.HasSuffix(s, " header-value-1") {
			t.Errorf("a request without the configured header: %q (all: %v)", s, seen)
		}
	}
	if len(seen) < 3 {
		t.Errorf("only %d requests seen: %v", len(seen), seen)
	}
	mu.Unlock()

	// The server stops: calls fail, the status says why.
	stop()
	time.Sleep(200 * time.Millisecond)
	for _, s := range []string{"direct", "proxied"} {
		if r, err := echo(s); err == nil || !r.IsError {
			t.Errorf("%s with the server stopped: %+v", s, r)
		}
		if st := status(m, s); st.Connected || st.Error == nil {
			t.Errorf("%s status with the server stopped: %+v", s, st)
		} else {
			t.Logf("%s: %s", s, *st.Error)
		}
	}

	// It comes back: after the back-off, calls reconnect.
	everythingHTTP(t, node, script, port)
	time.Sleep(350 * time.Millisecond)
	for _, s := range []string{"direct", "proxied"} {
		r, err := echo(s)
		if err != nil { // the stale-connection case fails once; the next call reconnects
			r, err = echo(s)
		}
		if err != nil || r.Content != "Echo: hi" {
			t.Errorf("%s after the restart: %+v, %v", s, r, err)
		}
		if st := status(m, s); !st.Connected || st.Error != nil {
			t.Errorf("%s status after the restart: %+v", s, st)
		}
	}
}

func TestFilesystemStdio(t *testing.T) {
	node, script := peerScript(t, "server-filesystem")
	checkGoroutines(t)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hi there"), 0o644)
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret"), 0o644)
	m := newManager(t, map[string]*config.MCPServer{
		"fs": {Command: node, Args: []string{script, dir}, ToolTimeoutSecs: 20, StartupTimeoutSecs: 20},
	}, nil, nil)
	startWait(t, m)
	byName := map[string]tools.Tool{}
	for _, tool := range m.Tools() {
		byName[tool.Spec().Name] = tool
	}
	if byName["fs__read_text_file"] == nil || byName["fs__read_text_file"].Kind() != tools.KindRead ||
		byName["fs__write_file"] == nil || byName["fs__write_file"].Kind() != tools.KindOther {
		t.Fatalf("tools %v", toolNames(m))
	}
	args := func(p string) string { b, _ := json.Marshal(map[string]string{"path": p}); return string(b) }
	if r := runTool(t, m, "fs__list_directory", args(dir)); r.IsError || !strings.Contains(r.Content, "[FILE] hello.txt") {
		t.Errorf("list_directory: %+v", r)
	}
	if r := runTool(t, m, "fs__read_text_file", args(filepath.Join(dir, "hello.txt"))); r.IsError || r.Content != "hi there" {
		t.Errorf("read_text_file: %+v", r)
	}
	r := runTool(t, m, "fs__read_text_file", args(filepath.Join(outside, "secret.txt")))
	if !r.IsError || strings.Contains(r.Content, "secret\n") || r.Content == "secret" {
		t.Errorf("a path outside the allowed directory: %+v", r)
	}
	t.Logf("outside the allowed directory: %s", r.Content)
}
