package mcp

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/tools"
)

var safeName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func TestToolName(t *testing.T) {
	long := strings.Repeat("x", 100)
	tests := []struct{ server, tool, want string }{
		{"fs", "read_file", "fs__read_file"},
		{"git-hub", "create-issue", "git-hub__create-issue"},
		{"my.srv", "do.thing/x", "my_srv__do_thing_x"},
		{"s", "héllo wörld", "s__h_llo_w_rld"},
		{"s", "", "s__"},
	}
	for _, tt := range tests {
		if got := toolName(tt.server, tt.tool); got != tt.want {
			t.Errorf("toolName(%q, %q) = %q, want %q", tt.server, tt.tool, got, tt.want)
		}
	}
	a, b := toolName("srv", long+"a"), toolName("srv", long+"b")
	for _, n := range []string{a, b} {
		if len(n) != 64 || !safeName.MatchString(n) || !strings.HasPrefix(n, "srv__xxx") {
			t.Errorf("long name %q (%d chars): want 64 safe characters", n, len(n))
		}
	}
	if a == b || a[:55] != b[:55] || !regexp.MustCompile(`_[0-9a-f]{8}$`).MatchString(a) {
		t.Errorf("long names must differ only by their hash suffix: %q %q", a, b)
	}
	if toolName("srv", long+"a") != a {
		t.Error("names must be stable")
	}
	if n := toolName("s", strings.Repeat("y", 59)); len(n) != 62 || strings.Contains(n, "_y_") {
		t.Errorf("a name within 64 characters is not cut: %q", n)
	}
}

func TestFilters(t *testing.T) {
	tests := []struct {
		enabled, disabled []string
		name              string
		want              bool
	}{
		{nil, nil, "anything", true},
		{[]string{"read_*"}, nil, "read_file", true},
		{[]string{"read_*"}, nil, "write_file", false},
		{[]string{"read_*", "list_*"}, []string{"read_secret*"}, "read_secrets", false},
		{nil, []string{"delete_*"}, "delete_repo", false},
		{nil, []string{"delete_*"}, "create_repo", true},
		{[]string{"{get,list}_*"}, nil, "list_issues", true},
		{[]string{"echo"}, []string{"echo"}, "echo", false}, // disabled wins
		{nil, []string{"[bad"}, "[bad", true},               // a malformed pattern matches nothing
	}
	for _, tt := range tests {
		if got := allowed(tt.enabled, tt.disabled, tt.name); got != tt.want {
			t.Errorf("allowed(%v, %v, %q) = %v, want %v", tt.enabled, tt.disabled, tt.name, got, tt.want)
		}
	}
}

func TestInputSchema(t *testing.T) {
	tests := []struct {
		in   any
		want string
	}{
		{nil, `{"type":"object","properties":{}}`},
		{map[string]any{"type": "object"}, `{"properties":{},"type":"object"}`},
		{map[string]any{"properties": map[string]any{"a": map[string]any{"type": "string"}}}, `{"properties":{"a":{"type":"string"}},"type":"object"}`},
		{map[string]any{"type": "object", "properties": map[string]any{}, "required": []string{}}, `{"properties":{},"required":[],"type":"object"}`},
		{"not a schema", `{"type":"object","properties":{}}`},
		{json.RawMessage(`[1]`), `{"type":"object","properties":{}}`},
	}
	for _, tt := range tests {
		if got := string(inputSchema(tt.in)); got != tt.want {
			t.Errorf("inputSchema(%v) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestToolKind(t *testing.T) {
	yes := true
	tests := []struct {
		a    *mcp.ToolAnnotations
		want string
	}{
		{nil, tools.KindOther},
		{&mcp.ToolAnnotations{}, tools.KindOther},
		{&mcp.ToolAnnotations{ReadOnlyHint: true}, tools.KindRead},
		{&mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &yes}, tools.KindOther},
	}
	for _, tt := range tests {
		if got := toolKind(&mcp.Tool{Annotations: tt.a}); got != tt.want {
			t.Errorf("toolKind(%+v) = %s, want %s", tt.a, got, tt.want)
		}
	}
}

func TestToResult(t *testing.T) {
	r := toResult(&mcp.CallToolResult{IsError: true, Content: []mcp.Content{
		&mcp.TextContent{Text: "one"},
		&mcp.ImageContent{Data: []byte{0x89, 'P', 'N', 'G'}, MIMEType: "image/png"},
		&mcp.TextContent{Text: "two"},
		&mcp.AudioContent{Data: []byte("abc"), MIMEType: "audio/wav"},
		&mcp.ResourceLink{URI: "file:///x", Name: "x", Description: "a file"},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///t", Text: "inside"}},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///b", Blob: []byte{1}}},
	}})
	want := "one\ntwo\n[audio: audio/wav, 3 bytes, not shown]\n[resource link: file:///x (x): a file]\n" +
		"[resource file:///t]\ninside\n[resource file:///b: unknown type, 1 bytes, not shown]"
	if r.Content != want || !r.IsError {
		t.Errorf("content %q (isError %v), want %q", r.Content, r.IsError, want)
	}
	if len(r.Images) != 1 || r.Images[0] != (message.Block{Type: message.TypeImage, Data: "iVBORw==", MimeType: "image/png"}) {
		t.Errorf("images %+v", r.Images)
	}
	r = toResult(&mcp.CallToolResult{StructuredContent: map[string]any{"b": 1, "a": "x"}})
	if r.Content != `{"a":"x","b":1}` || r.IsError {
		t.Errorf("structured: %+v", r)
	}
	r = toResult(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "text wins"}}, StructuredContent: map[string]any{"a": 1}})
	if r.Content != "text wins" {
		t.Errorf("text and structured: %+v", r)
	}
}

func TestCallArguments(t *testing.T) {
	for in, want := range map[string]string{
		"": "{}", "null": "{}", " null\n": "{}", "{}": "{}", `{"n":12345678901234567890}`: `{"n":12345678901234567890}`,
	} {
		got, err := callArguments(json.RawMessage(in))
		if err != nil || string(got) != want {
			t.Errorf("callArguments(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	for _, in := range []string{"[]", `"x"`, "1", "{", `{"a":}`} {
		if _, err := callArguments(json.RawMessage(in)); err == nil {
			t.Errorf("callArguments(%q): want an error", in)
		}
	}
}

func TestRedaction(t *testing.T) {
	cfg := &config.MCPServer{
		URL:     "https://user:hunter22@mcp.example.com:8443/v1/mcp?token=s3cr3t&x=1#frag",
		Headers: map[string]string{"Authorization": "Bearer abcdef123"},
	}
	if got := redactURL(cfg.URL); got != "https://mcp.example.com:8443/v1/mcp" {
		t.Errorf("redactURL = %q", got)
	}
	sc := newScrubber(cfg, nil)
	for _, msg := range []string{
		`Post "` + cfg.URL + `": dial tcp: refused`,
		`Post "https://user:***@mcp.example.com:8443/v1/mcp?token=s3cr3t&x=1": EOF`,
		`sent Bearer abcdef123`,
	} {
		got := sc.Replace(msg)
		for _, secret := range []string{"hunter22", "s3cr3t", "abcdef123", "user", "frag"} {
			if strings.Contains(got, secret) {
				t.Errorf("scrubbed %q still holds %q: %q", msg, secret, got)
			}
		}
	}
	env := newScrubber(&config.MCPServer{Command: "x", Env: map[string]string{"TOKEN": "tok-123456", "DEBUG": "1"}}, nil)
	if got := env.Replace("bad token tok-123456, debug 1"); got != "bad token <redacted>, debug 1" {
		t.Errorf("env scrub: %q", got)
	}
}
