package server

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/session"
)

// rpcError is the code and data of an agent-channel error answer.
func rpcError(r map[string]any) (code float64, data string) {
	code, _ = at(r, "data.error.code").(float64)
	data, _ = at(r, "data.error.data").(string)
	return code, data
}

// markerServer is a client mcpServers entry whose command leaves a file
// behind when it runs.
func markerServer(marker string) []any {
	return []any{map[string]any{"name": "probe", "command": "/bin/sh",
		"args": []any{"-c", "touch " + marker + "; exit 1"}, "env": []any{}}}
}

// TestSessionsOverWebSocketsAreConfined: /ws and /acp clients cannot open a
// session outside work_dir (by path, by a symlink leading out, or by
// loading a session stored elsewhere), nor make the server run MCP server
// commands of their own: -32602 with a message saying how to allow it.
func TestSessionsOverWebSocketsAreConfined(t *testing.T) {
	f := start(t, setup{})
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(f.work, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(f.work, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(outside, "client-mcp-ran")

	c := f.mustDial(t, "/ws")
	c.next()
	c.agentCall(0, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	refused := []struct {
		name   string
		params map[string]any
		data   string
	}{
		{"root of the file system", map[string]any{"cwd": "/", "mcpServers": []any{}}, "is outside the directories"},
		{"a sibling of work_dir", map[string]any{"cwd": outside, "mcpServers": []any{}}, "add it to roots under [serve]"},
		{"a symlink leading out", map[string]any{"cwd": filepath.Join(f.work, "out"), "mcpServers": []any{}}, "is outside"},
		{"dot-dot", map[string]any{"cwd": f.work + "/sub/../..", "mcpServers": []any{}}, "is outside"},
		{"relative", map[string]any{"cwd": "sub", "mcpServers": []any{}}, "not an absolute path"},
		{"client MCP server", map[string]any{"cwd": f.work, "mcpServers": markerServer(marker)}, "allow_client_mcp_servers = true"},
	}
	for i, tc := range refused {
		r, _ := c.agentCall(float64(10+i), "session/new", tc.params)
		if code, data := rpcError(r); code != -32602 || !strings.Contains(data, tc.data) {
			t.Errorf("session/new, %s: %v, want -32602 with %q", tc.name, r["data"], tc.data)
		}
	}
	for i, cwd := range []string{f.work, filepath.Join(f.work, "sub")} {
		r, _ := c.agentCall(float64(20+i), "session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}})
		if at(r, "data.result.sessionId") == nil {
			t.Errorf("session/new in %s: %v", cwd, r["data"])
		}
	}

	// A session made elsewhere (a CLI run in another directory) cannot be
	// loaded or resumed here, nor an inside one moved out.
	elsewhere := session.NewMeta(time.Now())
	elsewhere.Cwd = session.Str(outside)
	if err := f.store.Create(elsewhere); err != nil {
		t.Fatal(err)
	}
	_, inside := f.open(t)
	for i, tc := range []struct {
		method string
		params map[string]any
	}{
		{"session/load", map[string]any{"sessionId": elsewhere.ID, "mcpServers": []any{}}},
		{"session/load", map[string]any{"sessionId": elsewhere.ID, "cwd": outside, "mcpServers": []any{}}},
		{"session/resume", map[string]any{"sessionId": elsewhere.ID, "cwd": outside}},
		{"session/load", map[string]any{"sessionId": inside, "cwd": "/", "mcpServers": []any{}}},
		{"session/load", map[string]any{"sessionId": inside, "cwd": f.work, "mcpServers": markerServer(marker)}},
	} {
		r, _ := c.agentCall(float64(30+i), tc.method, tc.params)
		if code, _ := rpcError(r); code != -32602 {
			t.Errorf("%s %v: %v, want -32602", tc.method, tc.params, r["data"])
		}
	}

	// The bare /acp endpoint has the same rules.
	a := f.mustDial(t, "/acp")
	call := func(id float64, method string, params any) map[string]any {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		a.sendRaw(string(b))
		m, _ := a.until(func(m map[string]any) bool { return m["id"] == id && m["method"] == nil })
		return m
	}
	call(0, "initialize", map[string]any{"protocolVersion": 1})
	for i, params := range []map[string]any{
		{"cwd": "/", "mcpServers": []any{}},
		{"cwd": f.work, "mcpServers": markerServer(marker)},
	} {
		r := call(float64(1+i), "session/new", params)
		if code, _ := at(r, "error.code").(float64); code != -32602 {
			t.Errorf("/acp session/new %v: %v, want -32602", params, r)
		}
	}
	time.Sleep(300 * time.Millisecond) // a started command would have run by now
	if _, err := os.Stat(marker); err == nil {
		t.Error("a client's MCP server command ran")
	}
}

// TestConfinementCanBeWidened: [serve] roots adds directories and
// allow_client_mcp_servers lets clients start their own MCP servers.
func TestConfinementCanBeWidened(t *testing.T) {
	other := t.TempDir()
	f := start(t, setup{extra: fmt.Sprintf("[serve]\nroots = [%q]\nallow_client_mcp_servers = true\n", other)})
	c := f.mustDial(t, "/ws")
	c.next()
	c.agentCall(0, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	marker := filepath.Join(other, "client-mcp-ran")
	r, _ := c.agentCall(1, "session/new", map[string]any{"cwd": other, "mcpServers": markerServer(marker)})
	if at(r, "data.result.sessionId") == nil {
		t.Fatalf("session/new in a configured root with a client MCP server: %v", r["data"])
	}
	waitFor(t, func() bool { _, err := os.Stat(marker); return err == nil })
	r, _ = c.agentCall(2, "session/new", map[string]any{"cwd": "/", "mcpServers": []any{}})
	if code, _ := rpcError(r); code != -32602 {
		t.Errorf("/ is still outside: %v", r["data"])
	}
}
