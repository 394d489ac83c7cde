package agent

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/runtime/llm/llmtest"
)

// stubMCP serves one tool, greet, over Streamable HTTP and counts calls and
// the header the client was configured with.
func stubMCP(t *testing.T) (url string, calls *atomic.Int32, header *atomic.Value) {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "stub", Version: "1"}, nil)
	calls, header = &atomic.Int32{}, &atomic.Value{}
	s.AddTool(&mcp.Tool{Name: "greet", Description: "says hello", InputSchema: json.RawMessage(`{"type":"object","properties":{"who":{"type":"string"}}}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls.Add(1)
			var args struct{ Who string }
			json.Unmarshal(req.Params.Arguments, &args)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello, " + args.Who}}}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Get("X-Team"); v != "" {
			header.Store(v)
		}
		h.ServeHTTP(w, r)
	}))
	// The session's client keeps a stream open until its agent goes, which
	// is after this cleanup: cut it rather than wait for it.
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close() })
	return ts.URL, calls, header
}

// TestSessionMCPServers: session/new's mcpServers give that session (and
// only it) the server's tools; unsupported entries are -32602.
func TestSessionMCPServers(t *testing.T) {
	c := connect(t, "")
	c.init(t, 1)
	url, calls, header := stubMCP(t)
	var r acp.NewSessionResponse
	json.Unmarshal(c.mustCall(t, acp.MethodSessionNew, map[string]any{"cwd": c.work, "mcpServers": []any{
		map[string]any{"type": "http", "name": "stub", "url": url, "headers": []any{map[string]any{"name": "X-Team", "value": "blue"}}},
	}}), &r)
	c.srv.Enqueue(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "stub__greet", Arguments: `{"who":"ada"}`}}},
		llmtest.Reply{Text: []string{"Greeted."}},
	)
	c.answer = acp.PermissionAllowOnce
	c.mustCall(t, acp.MethodSessionPrompt, map[string]any{"sessionId": r.SessionID, "prompt": []any{map[string]any{"type": "text", "text": "greet ada"}}})
	reqs := c.srv.Requests()
	if calls.Load() != 1 || len(reqs) != 2 || !strings.Contains(body(reqs[1].Body), "hello, ada") {
		t.Fatalf("the session's MCP tool did not run: %d calls", calls.Load())
	}
	if header.Load() != "blue" {
		t.Errorf("configured header not sent: %v", header.Load())
	}
	// Another session does not see it.
	other := c.newSession(t)
	c.srv.Enqueue(llmtest.Reply{Text: []string{"ok"}})
	c.mustCall(t, acp.MethodSessionPrompt, map[string]any{"sessionId": other, "prompt": []any{map[string]any{"type": "text", "text": "hi"}}})
	if last := c.srv.Requests()[2]; strings.Contains(body(last.Body), "stub__greet") {
		t.Error("another session was offered the first session's MCP tool")
	}

	for _, bad := range []map[string]any{
		{"type": "sse", "name": "old", "url": url, "headers": []any{}},
		{"name": "", "command": "x", "args": []any{}, "env": []any{}},
		{"type": "http", "name": "notweb", "url": "ftp://example.com/mcp", "headers": []any{}},
	} {
		_, err := c.call(acp.MethodSessionNew, map[string]any{"cwd": c.work, "mcpServers": []any{bad}})
		wantError(t, err, -32602, "")
	}
}

func body(m map[string]any) string {
	b, _ := json.Marshal(m)
	return string(b)
}
