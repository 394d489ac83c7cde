package rest

import (
	"encoding/json"
	"net/http"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/engine/enginetest"
)

// TestTools compares /api/tools with seed 000's example
// (testdata/seed_tools.json: the seed's tools, without its MCP placeholder).
// delegate_task's description ends with the configured subagents, which the
// seed only sketches: it is compared up to that sentence.
func TestTools(t *testing.T) {
	data, err := os.ReadFile("testdata/seed_tools.json")
	if err != nil {
		t.Fatal(err)
	}
	var seed []map[string]any
	if err := json.Unmarshal(data, &seed); err != nil {
		t.Fatal(err)
	}
	byName := func(list []map[string]any) map[string]any {
		out := map[string]any{}
		for _, tool := range list {
			out[tool["function"].(map[string]any)["name"].(string)] = tool
		}
		return out
	}
	names := func(list []map[string]any) []string {
		var out []string
		for _, tool := range list {
			out = append(out, tool["function"].(map[string]any)["name"].(string))
		}
		return out
	}

	for _, shell := range []bool{true, false} {
		toml := "allow_shell = false\n"
		if shell {
			toml = "allow_shell = true\n"
		}
		f := newFixture(t, toml, false)
		var got []map[string]any
		if err := json.Unmarshal([]byte(f.get(t, "/api/tools", http.StatusOK)), &got); err != nil {
			t.Fatal(err)
		}
		want := byName(seed)
		if !shell {
			delete(want, "execute_command")
		}
		for _, m := range []map[string]any{want, byName(got)} {
			if d, ok := m["delegate_task"].(map[string]any); ok {
				fn := d["function"].(map[string]any)
				desc := fn["description"].(string)
				if i := strings.Index(desc, "Available subagents:"); i >= 0 {
					fn["description"] = desc[:i]
				}
			}
		}
		if g := byName(got); !reflect.DeepEqual(g, want) {
			t.Errorf("allow_shell=%v: tools differ from seed 000:\n got %v\nwant %v", shell, g, want)
		}
		// The registry's order (by name), stable across requests.
		if n := names(got); !slices.IsSorted(n) || len(n) != len(want) {
			t.Errorf("allow_shell=%v: tool order %v", shell, n)
		}
		for _, tool := range got {
			if len(tool) != 2 || tool["type"] != "function" || len(tool["function"].(map[string]any)) != 3 {
				t.Errorf("tool object shape: %v", tool)
			}
		}
	}
}

// TestListingsWaitForConnectingMCPServers: right after start, an MCP
// server still connecting is waited for (within its connect timeout):
// /api/tools lists its tools and /api/mcp-servers its real status, not
// "connected: false, error: null".
func TestListingsWaitForConnectingMCPServers(t *testing.T) {
	for _, path := range []string{"/api/tools", "/api/mcp-servers"} {
		f := newFixture(t, "", false)
		slow := enginetest.NewSlowMCP(300 * time.Millisecond)
		f.srv.Engine.MCP = slow
		f.srv.MCP = slow.Status
		body := f.get(t, path, http.StatusOK)
		want := `"slow__ping"`
		if path == "/api/mcp-servers" {
			want = `"connected":true`
		}
		if !strings.Contains(body, want) {
			t.Errorf("%s right after start: %s", path, body)
		}
	}
}
