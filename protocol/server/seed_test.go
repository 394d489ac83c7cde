package server

import (
	"encoding/json"
	"net/http"
	"regexp"
	"testing"

	"github.com/openheim/openheim/runtime/llm/llmtest"
)

var uuidRe = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// expect checks fields of a decoded frame: each path must hold exactly the
// given value, or, for the sentinels, a value of that kind.
func expect(t *testing.T, what string, v any, fields map[string]any) {
	t.Helper()
	for path, want := range fields {
		got := at(v, path)
		switch want := want.(type) {
		case kindOf:
			if !want.ok(got) {
				b, _ := json.Marshal(v)
				t.Errorf("%s: %s = %#v, want %s\nframe: %s", what, path, got, want.name, b)
			}
		default:
			gb, _ := json.Marshal(got)
			wb, _ := json.Marshal(want)
			if string(gb) != string(wb) {
				b, _ := json.Marshal(v)
				t.Errorf("%s: %s = %s, want %s\nframe: %s", what, path, gb, wb, b)
			}
		}
	}
}

type kindOf struct {
	name string
	ok   func(any) bool
}

var (
	anUUID   = kindOf{"a UUID", func(v any) bool { s, _ := v.(string); return uuidRe.MatchString(s) }}
	aString  = kindOf{"a non-empty string", func(v any) bool { s, _ := v.(string); return s != "" }}
	anObject = kindOf{"an object", func(v any) bool { _, ok := v.(map[string]any); return ok }}
	anArray  = kindOf{"an array", func(v any) bool { _, ok := v.([]any); return ok }}
	absent   = kindOf{"absent", func(v any) bool { return v == nil }}
)

// TestSeedWebSocketTranscript replays seed 000's /ws examples in order: the
// greeting, initialize with the string version, session/new with _meta,
// a prompt with a tool call and thinking (inline update form), session/list
// and session/load answering null, and the error shapes.
func TestSeedWebSocketTranscript(t *testing.T) {
	f := start(t, setup{})
	c := f.mustDial(t, "/ws")

	expect(t, "greeting", c.next(), map[string]any{
		"channel": "fs", "data": map[string]any{"type": "connected", "message": "Connected to Openheim"}})

	c.send("agent", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "0.1.0", "clientCapabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "openheim-ui", "version": "1.0.0"}}})
	init, _ := c.until(response(1))
	expect(t, "initialize", init, map[string]any{
		"channel": "agent", "data.jsonrpc": "2.0", "data.result.protocolVersion": "0.1.0",
		"data.result.agentCapabilities.loadSession":              true,
		"data.result.agentCapabilities.sessionCapabilities":      anObject,
		"data.result.agentCapabilities.sessionCapabilities.list": map[string]any{},
		"data.result.agentInfo.name":                             "openheim",
		"data.result.agentInfo.version":                          "0.1.0",
		"data.result._meta.models.default_provider":              "fake",
		"data.result._meta.models.providers.fake.default_model":  "gpt-4-turbo",
		"data.result._meta.models.providers.fake.models":         []string{"gpt-4-turbo", "gpt-4"},
		"data.result._meta.mcp_servers":                          []any{},
		"data.result._meta.skills":                               []any{},
		"data.result._meta.tools.0.type":                         "function",
		"data.result._meta.tools.0.function.name":                aString,
		"data.result._meta.tools.0.function.description":         aString,
		"data.result._meta.tools.0.function.parameters":          anObject,
	})

	c.send("agent", map[string]any{"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": map[string]any{
		"cwd": f.work, "_meta": map[string]any{"model": "gpt-4-turbo"}}})
	created, _ := c.until(response(2))
	expect(t, "session/new", created, map[string]any{"channel": "agent", "data.result.sessionId": anUUID})
	id := at(created, "data.result.sessionId").(string)

	f.llm.Enqueue(
		llmtest.Reply{Thinking: []string{"Let me think about this step by step..."}, Text: []string{"Here is the project structure:\n\n"},
			ToolCalls: []llmtest.ToolCall{{ID: "call_1", Name: "list_dir", Arguments: `{"path":"."}`}}},
		llmtest.Reply{Text: []string{"Done."}},
	)
	c.send("agent", map[string]any{"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": map[string]any{
		"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "List all files and explain the project structure."}}}})
	result, updates := c.until(response(3))
	expect(t, "session/prompt", result, map[string]any{"data.result.stopReason": "end_turn"})

	byKind := map[string][]map[string]any{}
	for _, u := range updates {
		expect(t, "update envelope", u, map[string]any{"channel": "agent", "data.jsonrpc": "2.0",
			"data.method": "session/update", "data.id": absent, "data.params.sessionId": id, "data.params.update": absent})
		k, _ := at(u, "data.params.sessionUpdate").(string)
		byKind[k] = append(byKind[k], u)
	}
	var thinking, text map[string]any
	for _, u := range byKind["agent_message_chunk"] {
		if at(u, "data.params.content._meta.kind") == "thinking" {
			thinking = u
		} else if text == nil {
			text = u
		}
	}
	if thinking == nil || text == nil || len(byKind["agent_thought_chunk"]) != 0 {
		t.Fatalf("want thinking as a marked agent_message_chunk and a text chunk, got %v", byKind)
	}
	expect(t, "thinking", thinking, map[string]any{"data.params.content": map[string]any{
		"type": "text", "text": "Let me think about this step by step...", "_meta": map[string]any{"kind": "thinking"}}})
	expect(t, "text", text, map[string]any{"data.params.content": map[string]any{"type": "text", "text": "Here is the project structure:\n\n"}})
	if len(byKind["tool_call"]) != 1 {
		t.Fatalf("tool_call updates: %v", byKind["tool_call"])
	}
	expect(t, "tool_call", byKind["tool_call"][0], map[string]any{
		"data.params.toolCallId": "call_1", "data.params.title": aString, "data.params.kind": "read",
		"data.params.status": "pending", "data.params.rawInput": map[string]any{"path": "."}})
	var completed map[string]any
	for _, u := range byKind["tool_call_update"] {
		if at(u, "data.params.status") == "completed" {
			completed = u
		}
	}
	if completed == nil {
		t.Fatalf("no completed tool_call_update in %v", byKind["tool_call_update"])
	}
	expect(t, "tool_call_update", completed, map[string]any{"data.params.toolCallId": "call_1", "data.params.rawOutput": aString})

	c.send("agent", map[string]any{"jsonrpc": "2.0", "id": 4, "method": "session/list", "params": map[string]any{}})
	list, _ := c.until(response(4))
	expect(t, "session/list", list, map[string]any{
		"data.result.sessions.0.sessionId": id, "data.result.sessions.0.cwd": f.work,
		"data.result.sessions.0.title":     "List all files and explain the project structure.",
		"data.result.sessions.0.updatedAt": aString, "data.result.nextCursor": nil})
	if _, ok := at(list, "data.result").(map[string]any)["nextCursor"]; !ok {
		t.Error("session/list: nextCursor must be present (null) on the last page")
	}

	// A second connection loads the session: history as inline updates,
	// then result null.
	c2 := f.mustDial(t, "/ws")
	c2.next()
	c2.send("agent", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{"protocolVersion": "0.1.0", "clientCapabilities": map[string]any{}}})
	c2.until(response(1))
	c2.send("agent", map[string]any{"jsonrpc": "2.0", "id": 4, "method": "session/load", "params": map[string]any{"sessionId": id, "cwd": f.work, "mcpServers": []any{}}})
	loaded, replay := c2.until(response(4))
	expect(t, "session/load", loaded, map[string]any{"data.result": nil})
	if _, ok := at(loaded, "data").(map[string]any)["result"]; !ok {
		t.Error("session/load: result must be present (null)")
	}
	if len(replay) == 0 {
		t.Fatal("session/load replayed nothing")
	}
	expect(t, "replay[0]", replay[0], map[string]any{"channel": "agent", "data.method": "session/update",
		"data.params.sessionId": id, "data.params.sessionUpdate": "user_message_chunk",
		"data.params.content": map[string]any{"type": "text", "text": "List all files and explain the project structure."}})

	// Errors: unknown session (-32002 with data), bad id (-32602).
	c2.send("agent", map[string]any{"jsonrpc": "2.0", "id": 5, "method": "session/load", "params": map[string]any{"sessionId": "550e8400-e29b-41d4-a716-446655440000", "cwd": f.work}})
	nf, _ := c2.until(response(5))
	expect(t, "not found", nf, map[string]any{"data.error.code": -32002, "data.error.message": "Resource not found",
		"data.error.data": "session not found: 550e8400-e29b-41d4-a716-446655440000"})
	c2.send("agent", map[string]any{"jsonrpc": "2.0", "id": 6, "method": "session/prompt", "params": map[string]any{"sessionId": "abc123", "prompt": []any{}}})
	bad, _ := c2.until(response(6))
	expect(t, "invalid id", bad, map[string]any{"data.error.code": -32602, "data.error.message": "Invalid params",
		"data.error.data": "Invalid argument: invalid session id format"})
}

// TestSeedREST checks the REST examples' shapes against a running server
// (protocol/rest tests every field against the seed; this proves the
// routes are mounted behind the guard as documented).
func TestSeedREST(t *testing.T) {
	f := start(t, setup{extra: "[mcp_servers.github]\ncommand = \"npx\"\nargs = [\"-y\", \"secret-arg\"]\nenv = { GITHUB_TOKEN = \"ghp_secret\" }\n"})
	meta, err := f.eng.NewSession(f.work, "", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		path   string
		status int
		fields map[string]any
	}{
		{"/healthz", 200, map[string]any{"status": "ok"}},
		{"/api/config", 200, map[string]any{"default_provider": "fake", "work_dir": f.work, "allow_shell": false,
			"providers.fake.kind": "openai_compatible", "providers.fake.api_key": absent,
			"mcp_servers.github.command": "npx", "mcp_servers.github.env": map[string]any{"GITHUB_TOKEN": "<redacted>"},
			"mcp_servers.github.args": absent, "mcp_servers.github.headers": map[string]any{}}},
		{"/api/models", 200, map[string]any{"default_provider": "fake", "providers.fake.models": []string{"gpt-4-turbo", "gpt-4"}}},
		{"/api/skills", 200, nil},
		{"/api/tools", 200, map[string]any{"0.type": "function", "0.function.parameters": anObject}},
		{"/api/mcp-servers", 200, nil},
		{"/api/sessions", 200, map[string]any{"0.id": meta.ID, "0.created_at": aString, "0.updated_at": aString,
			"0.skills": []any{}, "0.cwd": f.work, "0.context_usage": absent}},
		{"/api/sessions/" + meta.ID, 200, map[string]any{"meta.id": meta.ID, "messages": []any{}}},
		{"/api/sessions/not-a-uuid", 400, map[string]any{"error": "invalid session id"}},
		{"/api/sessions/550e8400-e29b-41d4-a716-446655440000", 404, map[string]any{"error": "session not found"}},
	}
	for _, tc := range cases {
		status, body := f.get(t, tc.path, nil)
		if status != tc.status {
			t.Errorf("GET %s: %d %s, want %d", tc.path, status, body, tc.status)
			continue
		}
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			t.Errorf("GET %s: not JSON: %s", tc.path, body)
			continue
		}
		expect(t, "GET "+tc.path, v, tc.fields)
		if tc.fields == nil {
			if _, ok := v.([]any); !ok {
				t.Errorf("GET %s = %s, want an array", tc.path, body)
			}
		}
	}
	status, body := f.get(t, "/api/config", http.Header{})
	if status != 200 || regexp.MustCompile(`ghp_secret|secret-arg`).Match(body) {
		t.Errorf("config leaks a secret: %s", body)
	}
}
