package main

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpServeConfig writes a config whose permission rules deny write_file,
// with the shell off, and a file to read.
func mcpServeConfig(t *testing.T) (cfg, work string) {
	t.Helper()
	dir := t.TempDir()
	work = filepath.Join(dir, "work")
	os.MkdirAll(work, 0o755)
	os.WriteFile(filepath.Join(work, "notes.md"), []byte("hello from the work dir\n"), 0o644)
	cfg = filepath.Join(dir, "config.toml")
	os.WriteFile(cfg, []byte("work_dir = \""+work+"\"\n[permissions]\ndeny = [\"write_file\"]\n"), 0o600)
	return cfg, work
}

// checkOpenheimTools lists and calls the served tools as an MCP host would.
func checkOpenheimTools(t *testing.T, ctx context.Context, cs *mcp.ClientSession, work string) {
	t.Helper()
	if got := cs.InitializeResult().ServerInfo.Name; got != "openheim" {
		t.Errorf("server name %q", got)
	}
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tl := range list.Tools {
		names[tl.Name] = true
	}
	for _, want := range []string{"read_file", "write_file", "edit_file", "list_dir", "search", "web_fetch"} {
		if !names[want] {
			t.Errorf("%s not served (got %v)", want, names)
		}
	}
	if names["execute_command"] {
		t.Error("execute_command served with allow_shell off")
	}
	text := func(r *mcp.CallToolResult) string {
		var b strings.Builder
		for _, c := range r.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String()
	}
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "notes.md"}})
	if err != nil || r.IsError || !strings.Contains(text(r), "hello from the work dir") {
		t.Errorf("read_file: %v %+v %q", err, r, text(r))
	}
	r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "../secret"}})
	if err != nil || !r.IsError || !strings.Contains(text(r), "outside the work directory") {
		t.Errorf("sandbox: %v %q", err, text(r))
	}
	r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": "x.txt", "content": "no"}})
	if err != nil || !r.IsError || !strings.Contains(text(r), "permission denied") {
		t.Errorf("denied write_file: %v %q", err, text(r))
	}
	if _, err := os.Stat(filepath.Join(work, "x.txt")); err == nil {
		t.Error("a denied write_file wrote its file")
	}
}

// TestMCPServeStdio: `openheim mcp serve` as a go-sdk client's stdio
// server, as Claude Code or Codex would start it.
func TestMCPServeStdio(t *testing.T) {
	cfg, work := mcpServeConfig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.Command(binary(t), "--config", cfg, "mcp", "serve")
	cmd.Env = append(os.Environ(), "OPENHEIM_HOME="+t.TempDir())
	client := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkOpenheimTools(t, ctx, cs, work)
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}
}

var mcpListenRE = regexp.MustCompile(`listening on (http://\S+/mcp)`)

// bearer adds a token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestMCPServeHTTP: the same over Streamable HTTP with the token serve
// keeps (made on first use, required), and the address rules.
func TestMCPServeHTTP(t *testing.T) {
	cfg, work := mcpServeConfig(t)
	home := t.TempDir()
	cmd := exec.Command(binary(t), "--config", cfg, "mcp", "serve", "--http", "127.0.0.1:0")
	cmd.Env = append(withoutEnv("OPENHEIM_TOKEN"), "OPENHEIM_HOME="+home)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("mcp serve --http exited with %v after SIGINT", err)
			}
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Error("mcp serve --http did not stop on SIGINT")
		}
	}()
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := mcpListenRE.FindStringSubmatch(sc.Text()); m != nil {
				urlc <- m[1]
			}
		}
	}()
	var url string
	select {
	case url = <-urlc:
	case <-time.After(20 * time.Second):
		t.Fatal("no listening line")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	token, err := os.ReadFile(filepath.Join(home, "serve_token"))
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1"}, nil)
	if _, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil); err == nil {
		t.Error("connected without the token")
	}
	hc := &http.Client{Transport: bearer{strings.TrimSpace(string(token))}}
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	checkOpenheimTools(t, ctx, cs, work)

	bad := exec.Command(binary(t), "--config", cfg, "mcp", "serve", "--http", "0.0.0.0:0", "--insecure-no-auth")
	bad.Env = withoutEnv("OPENHEIM_TOKEN")
	out, err := bad.CombinedOutput()
	if code := exitCode(err); code != 2 || !strings.Contains(string(out), "loopback") {
		t.Errorf("non-loopback without authentication: exit %d: %s", code, out)
	}
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}
