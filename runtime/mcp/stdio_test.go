//go:build unix

package mcp

// Stdio servers: this test binary as a Go MCP server, started in its own
// process group, killed, failing to start.

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/config"
)

// groupMembers lists the live (not zombie) processes of process group pgid.
func groupMembers(t *testing.T, pgid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc to inspect process groups")
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 2 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			out = append(out, pid)
		}
	}
	return out
}

func TestStdioServer(t *testing.T) {
	checkGoroutines(t)
	logs := &syncBuffer{}
	m := newManager(t, map[string]*config.MCPServer{
		"go": stdioServer(t, "ok", map[string]string{grandchildEnv: "1"}),
	}, nil, logs)
	startWait(t, m)
	st := status(m, "go")
	if !st.Connected || st.Transport != "stdio" || st.Command == nil || st.URL != nil || st.ToolCount != 14 {
		t.Fatalf("status %+v", st)
	}
	if r := runTool(t, m, "go__echo", `{"message":"over stdio"}`); r.IsError || r.Content != "over stdio" {
		t.Errorf("echo: %+v", r)
	}
	pid := serverPid(m, "go")
	if r := runTool(t, m, "go__pid", `{}`); r.Content != strconv.Itoa(pid) {
		t.Errorf("pid tool %q, server pid %d", r.Content, pid)
	}
	waitFor(t, 5*time.Second, "the grandchild to start", func() bool { return len(groupMembers(t, pid)) == 2 })
	waitFor(t, 2*time.Second, "the server's stderr in the log", func() bool {
		return strings.Contains(logs.String(), `msg="mcp server stderr" mcp_server=go line="test server ready"`)
	})

	start := time.Now()
	m.Close()
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Close took %s", took)
	}
	// SIGKILL is delivered asynchronously: give the kernel a moment.
	waitFor(t, 2*time.Second, "the server's process group to be empty after Close", func() bool {
		return len(groupMembers(t, pid)) == 0
	})
}

func TestStdioKilled(t *testing.T) {
	checkGoroutines(t)
	cfg := stdioServer(t, "ok", nil)
	cfg.ToolTimeoutSecs = 60
	logs := &syncBuffer{}
	m := newManager(t, map[string]*config.MCPServer{"go": cfg}, nil, logs)
	startWait(t, m)
	ctx := context.Background()
	pidOf := func() int {
		r, err := m.Call(ctx, "go", "pid", nil)
		if err != nil {
			t.Fatalf("pid: %+v, %v", r, err)
		}
		n, _ := strconv.Atoi(r.Content)
		return n
	}

	// Killed while idle: the session is known dead, so the next call
	// reconnects first and works.
	pid1 := pidOf()
	if err := syscall.Kill(-pid1, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the death to be noticed", func() bool { return !status(m, "go").Connected })
	if st := status(m, "go"); st.Error == nil || *st.Error != "the server exited (signal: killed)" || st.ToolCount != 14 {
		t.Errorf("status after the kill: %+v (%s)", st, deref(st.Error))
	}
	pid2 := pidOf()
	if pid2 == pid1 || pid2 == 0 {
		t.Fatalf("not reconnected: pids %d then %d", pid1, pid2)
	}

	// Killed during a call: that call fails at once (it may have run), the
	// next one reconnects.
	done := make(chan error, 1)
	go func() {
		_, err := m.Call(ctx, "go", "sleep", json.RawMessage(`{"ms":30000}`))
		done <- err
	}()
	// Killed once the server has the call (a fixed wait instead could end
	// first on a loaded machine: the call then went to the next server).
	waitFor(t, 10*time.Second, "the server to have the call", func() bool {
		return strings.Contains(logs.String(), `mcp_server=go line=sleeping`)
	})
	start := time.Now()
	if err := syscall.Kill(-pid2, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "the connection broke during the call") {
			t.Errorf("the call cut by the kill: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the call outlived its server")
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("the cut call took %s", took)
	}
	if pid3 := pidOf(); pid3 == pid2 || pid3 == 0 {
		t.Errorf("not reconnected after the cut call: %d", pid3)
	}
}

func TestStdioBackoff(t *testing.T) {
	checkGoroutines(t)
	dir := t.TempDir()
	starts, failFile := filepath.Join(dir, "starts"), filepath.Join(dir, "fail")
	w := &warnings{}
	m := newManager(t, map[string]*config.MCPServer{
		"go": stdioServer(t, "ok", map[string]string{startsEnv: starts, failFileEnv: failFile}),
	}, w, nil)
	// Long enough that a loaded machine still makes the second call
	// within it; the test sleeps until it is over, not for a guess.
	m.backoff = 2 * time.Second
	startWait(t, m)
	nStarts := func() int {
		b, _ := os.ReadFile(starts)
		return strings.Count(string(b), "\n")
	}
	pid := serverPid(m, "go")
	if err := os.WriteFile(failFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	syscall.Kill(-pid, syscall.SIGKILL)
	waitFor(t, 5*time.Second, "the death to be noticed", func() bool { return !status(m, "go").Connected })

	// The reconnect fails: the error says why, Warn is called.
	r, err := m.Call(context.Background(), "go", "echo", nil)
	want := `MCP server "go" is unavailable: the server exited during start-up (exit status 3); its last stderr line: refusing to start: fail file present`
	if err == nil || !strings.HasPrefix(r.Content, want) || !retryIn.MatchString(r.Content[len(want):]) || !r.IsError {
		t.Errorf("failed reconnect:\n%s\nwant prefix\n%s%s", r.Content, want, retryIn)
	}
	if got := w.get(); len(got) != 1 || !strings.HasPrefix(got[0], "go: the server exited during start-up") {
		t.Errorf("warnings %v", got)
	}
	// Within the back-off calls fail fast, without starting the server.
	before := nStarts()
	start := time.Now()
	if _, err := m.Call(context.Background(), "go", "echo", nil); err == nil || !strings.Contains(err.Error(), "next connection attempt in") {
		t.Errorf("within the back-off: %v", err)
	}
	// No start was tried (nStarts), nor waited for: a start of the
	// server takes longer than a failed call's bookkeeping, even loaded.
	if time.Since(start) > time.Second || nStarts() != before {
		t.Errorf("the back-off was not respected: %s, %d starts then %d", time.Since(start), before, nStarts())
	}
	// After it, the next call connects again.
	os.Remove(failFile)
	pastBackoff(m, "go")
	if r, err := m.Call(context.Background(), "go", "echo", json.RawMessage(`{"message":"back"}`)); err != nil || r.Content != "back" {
		t.Errorf("after the back-off: %+v, %v", r, err)
	}
}

func TestFailingServers(t *testing.T) {
	checkGoroutines(t)
	dir := t.TempDir()
	hangPids := filepath.Join(dir, "hang")
	refused := httpConfig("http://127.0.0.1:1/mcp")
	hang := stdioServer(t, "hang", map[string]string{startsEnv: hangPids})
	hang.StartupTimeoutSecs = 1
	exit := stdioServer(t, "exit", map[string]string{"TEST_TOKEN": "tok-secret-123"})
	w := &warnings{}
	m := newManager(t, map[string]*config.MCPServer{
		"good":     stdioServer(t, "ok", nil),
		"notfound": {Command: "openheim-test-no-such-command", StartupTimeoutSecs: 1},
		"refused":  refused,
		"hang":     hang,
		"exit":     exit,
	}, w, nil)

	start := time.Now()
	m.Start(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m.Wait(ctx)
	// Against the default 60 s, not against the 1 s: Wait also waits for
	// "good" and "exit", two starts of this -race test binary, which a
	// loaded machine may take seconds over.
	if took := time.Since(start); took > 8*time.Second {
		t.Errorf("Wait took %s with a 1 s startup timeout", took)
	}
	want := map[string]string{
		"good":     "",
		"notfound": `cannot start "openheim-test-no-such-command": executable file not found in $PATH`,
		"refused":  "cannot reach http://127.0.0.1:1/mcp: connect: connection refused",
		"hang":     "no answer within 1s (startup_timeout_secs)",
		"exit":     "the server exited during start-up (exit status 3); its last stderr line: fatal: bad token <redacted>",
	}
	for _, st := range m.Status() {
		if got := deref(st.Error); st.Connected != (want[st.Name] == "") || (want[st.Name] != "" && got != want[st.Name]) {
			t.Errorf("%s: connected %v, error %q; want %q", st.Name, st.Connected, got, want[st.Name])
		}
	}
	if got := w.get(); len(got) != 4 || strings.Contains(strings.Join(got, " "), "tok-secret") {
		t.Errorf("warnings %v", got)
	}
	if r := runTool(t, m, "good__echo", `{"message":"unaffected"}`); r.Content != "unaffected" {
		t.Errorf("the good server: %+v", r)
	}
	if n := len(toolNames(m)); n != 14 {
		t.Errorf("%d tools offered, want the good server's 14", n)
	}
	// The server that never answered was killed when it was abandoned.
	b, _ := os.ReadFile(hangPids)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if pid == 0 {
		t.Fatal("the hanging server did not record its pid")
	}
	waitFor(t, 2*time.Second, "the abandoned server to be gone", func() bool { return len(groupMembers(t, pid)) == 0 })
}
