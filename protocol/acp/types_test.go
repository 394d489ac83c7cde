package acp

import (
	"encoding/json"
	"reflect"
	"testing"
)

// canonJSON re-encodes a JSON text with sorted keys and no spaces.
func canonJSON(t *testing.T, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad JSON %s: %v", s, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// Examples from seed 000 (the web client's messages), the ACP v1 docs
// (initialization, session setup, prompt turn, tool calls, file system)
// and seed 002's types. want is empty when the JSON must come back as is.
func TestTypesRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		v    any // pointer to a zero value of the type
		in   string
		want string
	}{
		{"initialize v1 (docs)", &InitializeRequest{},
			`{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":true},"clientInfo":{"name":"my-client","title":"My Client","version":"1.0.0"}}`, ""},
		{"initialize string version (seed 000)", &InitializeRequest{},
			`{"protocolVersion":"0.1.0","clientCapabilities":{},"clientInfo":{"name":"openheim-ui","version":"1.0.0"}}`,
			`{"protocolVersion":"0.1.0","clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false},"clientInfo":{"name":"openheim-ui","version":"1.0.0"}}`},
		{"initialize result v1", &InitializeResponse{},
			`{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"promptCapabilities":{"image":true,"audio":false,"embeddedContext":true},"mcpCapabilities":{"http":true,"sse":false},"sessionCapabilities":{"list":{},"resume":{},"close":{},"delete":{}}},"agentInfo":{"name":"openheim","title":"Openheim","version":"0.1.0"},"authMethods":[]}`, ""},
		{"initialize result (seed 000)", &InitializeResponse{},
			`{"protocolVersion":"0.1.0","agentCapabilities":{"loadSession":true,"sessionCapabilities":{"list":{}}},"agentInfo":{"name":"openheim","version":"0.1.0"},"_meta":{"skills":["debugging","rust"],"mcp_servers":[{"name":"filesystem","transport":"stdio","connected":true,"tool_count":3}]}}`,
			`{"protocolVersion":"0.1.0","agentCapabilities":{"loadSession":true,"promptCapabilities":{"image":false,"audio":false,"embeddedContext":false},"mcpCapabilities":{"http":false,"sse":false},"sessionCapabilities":{"list":{}}},"agentInfo":{"name":"openheim","version":"0.1.0"},"authMethods":[],"_meta":{"skills":["debugging","rust"],"mcp_servers":[{"name":"filesystem","transport":"stdio","connected":true,"tool_count":3}]}}`},
		{"initialize result with auth method", &InitializeResponse{},
			`{"protocolVersion":1,"agentCapabilities":{"loadSession":false,"promptCapabilities":{"image":false,"audio":false,"embeddedContext":false},"mcpCapabilities":{"http":false,"sse":false},"sessionCapabilities":{}},"authMethods":[{"id":"api-key","name":"API key","description":"Set OPENAI_API_KEY"}]}`, ""},
		{"session/new (seed 000)", &NewSessionRequest{},
			`{"cwd":"/path/to/workspace","_meta":{"model":"gpt-4-turbo","skills":["rust","debugging"]}}`,
			`{"cwd":"/path/to/workspace","mcpServers":[],"_meta":{"model":"gpt-4-turbo","skills":["rust","debugging"]}}`},
		{"session/new with MCP servers (docs)", &NewSessionRequest{},
			`{"cwd":"/home/user/project","mcpServers":[{"name":"filesystem","command":"/path/to/mcp-server","args":["--stdio"],"env":[]},{"type":"http","name":"api-server","url":"https://api.example.com/mcp","headers":[{"name":"Authorization","value":"Bearer token123"}]}]}`, ""},
		{"session/new result (seed 000)", &NewSessionResponse{}, `{"sessionId":"550e8400-e29b-41d4-a716-446655440000"}`, ""},
		{"session/new result with modes and config (docs)", &NewSessionResponse{},
			`{"sessionId":"sess_abc123def456","modes":{"currentModeId":"ask","availableModes":[{"id":"ask","name":"Ask","description":"Request permission before making any changes"},{"id":"code","name":"Code"}]},"configOptions":[{"id":"model","name":"Model","category":"model","type":"select","currentValue":"model-1","options":[{"value":"model-1","name":"Model 1","description":"The fastest model"},{"value":"model-2","name":"Model 2"}]}]}`, ""},
		{"session/load (seed 000)", &LoadSessionRequest{},
			`{"sessionId":"550e8400-e29b-41d4-a716-446655440000","cwd":"/home/user/my-project","mcpServers":[]}`, ""},
		{"session/load result", &LoadSessionResponse{}, `{}`, ""},
		{"session/resume", &ResumeSessionRequest{}, `{"sessionId":"s1","cwd":"/w"}`, `{"sessionId":"s1","cwd":"/w","mcpServers":[]}`},
		{"session/list (seed 000)", &ListSessionsRequest{}, `{}`, ""},
		{"session/list with filter and cursor", &ListSessionsRequest{}, `{"cwd":"/home/user/my-project","cursor":"c2"}`, ""},
		{"session/list result (seed 000)", &ListSessionsResponse{},
			`{"sessions":[{"sessionId":"550e8400-e29b-41d4-a716-446655440000","cwd":"/home/user/my-project","title":"Refactor the auth module","updatedAt":"2025-05-10T14:35:42Z"},{"sessionId":"661f9511-f3ac-52e5-b827-557766551111","cwd":"/","title":null,"updatedAt":null}],"nextCursor":null}`,
			`{"sessions":[{"sessionId":"550e8400-e29b-41d4-a716-446655440000","cwd":"/home/user/my-project","title":"Refactor the auth module","updatedAt":"2025-05-10T14:35:42Z"},{"sessionId":"661f9511-f3ac-52e5-b827-557766551111","cwd":"/"}]}`},
		{"session/list result, more pages", &ListSessionsResponse{}, `{"sessions":[],"nextCursor":"eyJvZmZzZXQiOjUwfQ=="}`, ""},
		{"session/close", &CloseSessionRequest{}, `{"sessionId":"s1"}`, ""},
		{"session/delete", &DeleteSessionRequest{}, `{"sessionId":"s1"}`, ""},
		{"empty result", &EmptyResponse{}, `{}`, ""},
		{"session/cancel", &CancelNotification{}, `{"sessionId":"sess_abc123def456"}`, ""},
		{"session/set_mode (docs)", &SetSessionModeRequest{}, `{"sessionId":"sess_abc123def456","modeId":"code"}`, ""},
		{"session/set_config_option (docs)", &SetSessionConfigOptionRequest{}, `{"sessionId":"sess_abc123def456","configId":"model","value":"model-2"}`, ""},
		{"session/set_config_option, optionId (seed 002)", &SetSessionConfigOptionRequest{},
			`{"sessionId":"s1","optionId":"mode","value":"code","_meta":{"x":1}}`, `{"sessionId":"s1","configId":"mode","value":"code","_meta":{"x":1}}`},
		{"session/set_config_option result", &SetSessionConfigOptionResponse{},
			`{"configOptions":[{"type":"select","id":"model","name":"Model","currentValue":"gpt-4","options":[{"value":"gpt-4","name":"GPT-4"}]}]}`, ""},
		{"session/prompt (seed 000)", &PromptRequest{},
			`{"sessionId":"550e8400-e29b-41d4-a716-446655440000","prompt":[{"type":"text","text":"List all Rust files in the src directory and explain the project structure."}]}`, ""},
		{"session/prompt with every block (docs)", &PromptRequest{},
			`{"sessionId":"sess_abc123def456","prompt":[{"type":"text","text":""},{"type":"image","mimeType":"image/png","data":"iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB"},{"type":"audio","mimeType":"audio/wav","data":"UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQAAAAA="},{"type":"resource_link","uri":"file:///home/user/document.pdf","name":"document.pdf","mimeType":"application/pdf"},{"type":"resource","resource":{"uri":"file:///home/user/script.py","mimeType":"text/x-python","text":"def hello():\n    print('Hello, world!')"}},{"type":"resource","resource":{"uri":"file:///home/user/a.png","mimeType":"image/png","blob":"iVBORw0KGgo="}}],"_meta":{"k":"v"}}`, ""},
		{"session/prompt result (seed 000)", &PromptResponse{}, `{"stopReason":"end_turn"}`, ""},
		{"session/prompt result with usage", &PromptResponse{},
			`{"stopReason":"cancelled","usage":{"totalTokens":17,"inputTokens":10,"outputTokens":5,"cachedReadTokens":2},"_meta":{"iterations":2}}`, ""},
		{"session/request_permission (docs)", &RequestPermissionRequest{},
			`{"sessionId":"sess_abc123def456","toolCall":{"toolCallId":"call_001"},"options":[{"optionId":"allow-once","name":"Allow once","kind":"allow_once"},{"optionId":"reject-once","name":"Reject","kind":"reject_once"}]}`, ""},
		{"session/request_permission, full tool call", &RequestPermissionRequest{},
			`{"sessionId":"s1","toolCall":{"toolCallId":"c1","title":"execute_command","kind":"execute","status":"pending","rawInput":{"command":"rm -rf build"}},"options":[{"optionId":"allow_always","name":"Always allow","kind":"allow_always"},{"optionId":"reject_always","name":"Never","kind":"reject_always"}]}`, ""},
		{"permission selected (docs)", &RequestPermissionResponse{}, `{"outcome":{"outcome":"selected","optionId":"allow-once"}}`, ""},
		{"permission cancelled (docs)", &RequestPermissionResponse{}, `{"outcome":{"outcome":"cancelled"}}`, ""},
		{"fs/read_text_file (docs)", &ReadTextFileRequest{}, `{"sessionId":"sess_abc123def456","path":"/home/user/project/src/main.py","line":10,"limit":50}`, ""},
		{"fs/read_text_file whole file", &ReadTextFileRequest{}, `{"sessionId":"s","path":"/a"}`, ""},
		{"fs/read_text_file result (docs)", &ReadTextFileResponse{}, `{"content":"def hello_world():\n    print('Hello, world!')\n"}`, ""},
		{"fs/read_text_file empty file", &ReadTextFileResponse{}, `{"content":""}`, ""},
		{"fs/write_text_file (docs)", &WriteTextFileRequest{},
			`{"sessionId":"sess_abc123def456","path":"/home/user/project/config.json","content":"{\n  \"debug\": true,\n  \"version\": \"1.0.0\"\n}"}`, ""},
		{"fs/write_text_file result null (docs)", &WriteTextFileResponse{}, `null`, `{}`},
		{"fs/write_text_file result", &WriteTextFileResponse{}, `{}`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := json.Unmarshal([]byte(c.in), c.v); err != nil {
				t.Fatalf("decode: %v", err)
			}
			got, err := json.Marshal(c.v)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			want := c.want
			if want == "" {
				want = c.in
			}
			if canonJSON(t, string(got)) != canonJSON(t, want) {
				t.Errorf("\ngot  %s\nwant %s", got, want)
			}
			// Encoding is stable: decoding the output gives the same value.
			again := reflect.New(reflect.TypeOf(c.v).Elem()).Interface()
			if err := json.Unmarshal(got, again); err != nil {
				t.Fatalf("decode again: %v", err)
			}
			got2, _ := json.Marshal(again)
			if string(got2) != string(got) {
				t.Errorf("not stable:\n%s\n%s", got, got2)
			}
		})
	}
}

func TestInitializeVersion(t *testing.T) {
	for _, c := range []struct {
		params  string
		str     bool
		version string
	}{
		{`{"protocolVersion":1}`, false, `1`},
		{`{"protocolVersion":2}`, false, `1`},
		{`{}`, false, `1`},
		{`{"protocolVersion":"0.1.0","clientCapabilities":{}}`, true, `"0.1.0"`},
	} {
		var r InitializeRequest
		if err := json.Unmarshal([]byte(c.params), &r); err != nil {
			t.Fatal(err)
		}
		if r.StringVersion() != c.str || string(r.ResponseVersion()) != c.version {
			t.Errorf("%s: string %v, answer %s", c.params, r.StringVersion(), r.ResponseVersion())
		}
	}
	// The answer built from a request echoes its form.
	var req InitializeRequest
	json.Unmarshal([]byte(`{"protocolVersion":"0.1.0"}`), &req)
	b, _ := json.Marshal(InitializeResponse{ProtocolVersion: req.ResponseVersion(),
		AgentCapabilities: AgentCapabilities{LoadSession: true, SessionCapabilities: SessionCapabilities{List: &Capability{}}}})
	want := `{"protocolVersion":"0.1.0","agentCapabilities":{"loadSession":true,"promptCapabilities":{"image":false,"audio":false,"embeddedContext":false},"mcpCapabilities":{"http":false,"sse":false},"sessionCapabilities":{"list":{}}},"authMethods":[]}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	b, _ = json.Marshal(InitializeResponse{})
	if string(b) != `{"protocolVersion":1,"agentCapabilities":{"loadSession":false,"promptCapabilities":{"image":false,"audio":false,"embeddedContext":false},"mcpCapabilities":{"http":false,"sse":false},"sessionCapabilities":{}},"authMethods":[]}` {
		t.Errorf("zero response %s", b)
	}
}

func TestTypeHelpers(t *testing.T) {
	var p PromptRequest
	in := `{"sessionId":"s","prompt":[{"type":"resource","resource":{"uri":"file:///a.py","mimeType":"text/x-python","text":""}},{"type":"resource","resource":{"uri":"file:///b.png","blob":"AA=="}}]}`
	if err := json.Unmarshal([]byte(in), &p); err != nil {
		t.Fatal(err)
	}
	r, err := p.Prompt[0].DecodeResource()
	if err != nil || r.URI != "file:///a.py" || r.Text == nil || *r.Text != "" || r.Blob != nil || r.MimeType != "text/x-python" {
		t.Errorf("text resource %+v %v", r, err)
	}
	r, err = p.Prompt[1].DecodeResource()
	if err != nil || r.Blob == nil || *r.Blob != "AA==" || r.Text != nil {
		t.Errorf("blob resource %+v %v", r, err)
	}
	if _, err := (PromptBlock{Type: "text"}).DecodeResource(); err == nil {
		t.Error("no resource decoded")
	}

	var resp RequestPermissionResponse
	json.Unmarshal([]byte(`{"outcome":{"outcome":"selected","optionId":"allow-once"}}`), &resp)
	if id, ok := resp.Selected(); !ok || id != "allow-once" {
		t.Errorf("selected %q %v", id, ok)
	}
	resp = RequestPermissionResponse{}
	json.Unmarshal([]byte(`{"outcome":{"outcome":"cancelled"}}`), &resp)
	if _, ok := resp.Selected(); ok {
		t.Error("cancelled counted as selected")
	}

	// Nil slices the schema requires are written as [].
	for _, c := range []struct {
		v    any
		want string
	}{
		{NewSessionRequest{CWD: "/w"}, `{"cwd":"/w","mcpServers":[]}`},
		{LoadSessionRequest{SessionID: "s"}, `{"sessionId":"s","cwd":"","mcpServers":[]}`},
		{ListSessionsResponse{}, `{"sessions":[]}`},
		{SetSessionConfigOptionResponse{}, `{"configOptions":[]}`},
		{SessionModeState{CurrentModeID: "c"}, `{"currentModeId":"c","availableModes":[]}`},
		{PromptBlock{Type: "text"}, `{"type":"text","text":""}`},
		{LoadSessionResponse{}, `{}`},
		{WriteTextFileResponse{}, `{}`},
		{SessionConfigOption{ID: "m", Name: "M"}, `{"type":"select","id":"m","name":"M","currentValue":"","options":[]}`},
	} {
		b, err := json.Marshal(c.v)
		if err != nil || string(b) != c.want {
			t.Errorf("%T: %s %v, want %s", c.v, b, err, c.want)
		}
	}

	// A whole session/request_permission exchange as a client would see it.
	req := RequestPermissionRequest{SessionID: "s", ToolCall: PermissionToolCall{ToolCallID: "c1", Title: "write_file", Kind: "edit",
		RawInput: json.RawMessage(`{"path":"a.txt"}`)},
		Options: []PermissionOption{{OptionID: "allow", Name: "Allow", Kind: PermissionAllowOnce}, {OptionID: "reject", Name: "Reject", Kind: PermissionRejectOnce}}}
	b, _ := json.Marshal(req)
	if string(b) != `{"sessionId":"s","toolCall":{"toolCallId":"c1","title":"write_file","kind":"edit","rawInput":{"path":"a.txt"}},"options":[{"optionId":"allow","name":"Allow","kind":"allow_once"},{"optionId":"reject","name":"Reject","kind":"reject_once"}]}` {
		t.Errorf("%s", b)
	}
}
