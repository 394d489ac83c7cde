package mcpserver

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openheim/openheim/runtime/tools"
)

// link is one way a go-sdk client reaches the server.
type link struct {
	name       string
	http       bool   // Streamable HTTP (Handler) instead of an in-memory pipe
	protocol   string // asked for; "" is the SDK's latest, 2026-07-28 (server/discover)
	negotiated string
}

// links: the SDK's stateful HTTP handler cannot serve 2026-07-28, so a
// client asking for it there falls back to the initialize handshake.
var links = []link{
	{"memory", false, "", "2026-07-28"},
	{"memory-2025-11-25", false, "2025-11-25", "2025-11-25"},
	{"http", true, "", "2025-11-25"},
}

// connect serves opts to a go-sdk client over l.
func connect(t *testing.T, opts Options, l link) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	var ct mcp.Transport
	if l.http {
		ct = &mcp.StreamableClientTransport{Endpoint: httpServer(t, opts), MaxRetries: -1}
	} else {
		var st mcp.Transport
		ct, st = mcp.NewInMemoryTransports()
		ss, err := New(opts).Connect(ctx, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ss.Wait() })
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).
		Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: l.protocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != l.negotiated {
		t.Fatalf("%s: negotiated protocol %s, want %s", l.name, got, l.negotiated)
	}
	return cs
}

// httpServer serves opts at /mcp on a loopback port.
func httpServer(t *testing.T, opts Options) string {
	mux := http.NewServeMux()
	mux.Handle("/mcp", Handler(opts))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

func builtins(t *testing.T, dir string, shell bool) *tools.Registry {
	t.Helper()
	reg, err := tools.Builtins(tools.Options{WorkDir: dir, AllowShell: shell})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var text []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	return strings.Join(text, "\n"), res.IsError
}

func TestToolsList(t *testing.T) {
	for _, shell := range []bool{false, true} {
		reg := builtins(t, t.TempDir(), shell)
		cs := connect(t, Options{Tools: reg, Version: "1.2.3"}, links[0])
		if info := cs.InitializeResult().ServerInfo; info.Name != "openheim" || info.Version != "1.2.3" {
			t.Errorf("server info = %+v", info)
		}
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		specs := reg.Specs()
		if len(res.Tools) != len(specs) {
			t.Fatalf("shell=%v: %d tools, want %d", shell, len(res.Tools), len(specs))
		}
		hasShell := false
		for i, got := range res.Tools {
			want := specs[i]
			var schema any
			if err := json.Unmarshal(want.Parameters, &schema); err != nil {
				t.Fatal(err)
			}
			if got.Name != want.Name || got.Description != want.Description || !reflect.DeepEqual(got.InputSchema, schema) {
				t.Errorf("tool %d = %s %q %v, want %s %q %s", i, got.Name, got.Description, got.InputSchema,
					want.Name, want.Description, want.Parameters)
			}
			hasShell = hasShell || got.Name == "execute_command"
			a := got.Annotations
			switch got.Name {
			case "list_dir", "read_file", "search":
				if a == nil || !a.ReadOnlyHint {
					t.Errorf("%s: annotations %+v, want read-only", got.Name, a)
				}
			case "write_file", "edit_file", "execute_command":
				if a == nil || a.ReadOnlyHint || a.DestructiveHint == nil || !*a.DestructiveHint {
					t.Errorf("%s: annotations %+v, want destructive", got.Name, a)
				}
			}
		}
		if hasShell != shell {
			t.Errorf("allow_shell=%v but execute_command listed=%v", shell, hasShell)
		}
	}
}

func TestCallBuiltins(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, l := range links {
		cs := connect(t, Options{Tools: builtins(t, dir, false)}, l)
		if text, isErr := call(t, cs, "write_file", map[string]any{"path": "notes/a.txt", "content": "alpha\nbeta\n"}); isErr {
			t.Fatalf("write_file: %s", text)
		}
		if b, err := os.ReadFile(filepath.Join(dir, "notes", "a.txt")); err != nil || string(b) != "alpha\nbeta\n" {
			t.Fatalf("file on disk = %q, %v", b, err)
		}
		if text, isErr := call(t, cs, "read_file", map[string]any{"path": "notes/a.txt"}); isErr || !strings.Contains(text, "beta") {
			t.Errorf("read_file = %q, isError=%v", text, isErr)
		}
		// Missing arguments (null on the wire) mean {}: the work dir itself.
		if text, isErr := call(t, cs, "list_dir", json.RawMessage("null")); isErr || !strings.Contains(text, "notes/") {
			t.Errorf("list_dir = %q, isError=%v", text, isErr)
		}
		for _, p := range []string{filepath.Join(outside, "secret.txt"), "../" + filepath.Base(outside) + "/secret.txt"} {
			if text, isErr := call(t, cs, "read_file", map[string]any{"path": p}); !isErr || strings.Contains(text, "secret\n") {
				t.Errorf("read_file %s = %q, isError=%v; want a refusal", p, text, isErr)
			}
		}
		if text, isErr := call(t, cs, "list_dir", []int{1}); !isErr || !strings.Contains(text, "JSON object") {
			t.Errorf("list_dir with array arguments = %q, isError=%v", text, isErr)
		}
		ctx := context.Background()
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "no_such_tool"}); err == nil {
			t.Error("unknown tool: no error")
		}
	}
}

func TestPermit(t *testing.T) {
	dir := t.TempDir()
	var mu sync.Mutex
	var asked []string
	permit := func(_ context.Context, tool string, args json.RawMessage) (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, tool+" "+string(args))
		if tool == "write_file" {
			return false, "write_file needs approval"
		}
		return true, ""
	}
	cs := connect(t, Options{Tools: builtins(t, dir, false), Permit: permit}, links[0])
	text, isErr := call(t, cs, "write_file", map[string]any{"path": "a.txt", "content": "x"})
	if !isErr || text != "permission denied: write_file needs approval" {
		t.Errorf("refused call = %q, isError=%v", text, isErr)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.txt")); !os.IsNotExist(err) {
		t.Errorf("a refused write_file wrote the file: %v", err)
	}
	if text, isErr := call(t, cs, "list_dir", nil); isErr {
		t.Errorf("allowed call failed: %s", text)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{`write_file {"content":"x","path":"a.txt"}`, "list_dir {}"}; !reflect.DeepEqual(asked, want) {
		t.Errorf("Permit asked %q, want %q", asked, want)
	}
}
