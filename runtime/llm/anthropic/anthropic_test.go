package anthropic

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/llm/internal/wiretest"
	"github.com/openheim/openheim/runtime/llm/llmtest"
	"github.com/openheim/openheim/runtime/message"
)

const testKey = "sk-test-SECRET-4242"

// setupAn starts a fake server with replies and an Anthropic client on it.
func setupAn(t *testing.T, cfg Config, replies ...llmtest.Reply) (*llmtest.Server, llm.Provider) {
	t.Helper()
	return wiretest.Setup(t, cfg, New, replies...)
}

func anRequestFor(msgs ...message.Message) *llm.Request {
	return &llm.Request{Model: "claude-test", System: "be brief", Messages: msgs}
}

func userMsg(text string) message.Message {
	return message.Message{Role: message.RoleUser, Content: []message.Block{message.Text(text)}}
}

func strp(s string) *string { return &s }

// jsonEqual compares a decoded value with a JSON text, ignoring key order.
func jsonEqual(t *testing.T, got any, want string) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad want JSON: %v", err)
	}
	if !reflect.DeepEqual(got, w) {
		g, _ := json.Marshal(got)
		t.Errorf("got  %s\nwant %s", g, want)
	}
}

func TestAnthropicStreamText(t *testing.T) {
	srv, p := setupAn(t, Config{APIKey: testKey},
		llmtest.Reply{Text: []string{"Hel", "lo ", "wörld 🎉"},
			Usage: &llmtest.Usage{Prompt: 100, Completion: 7, Cached: 60, CacheCreation: 20}})
	ds, resp, err := wiretest.Collect(t, p, anRequestFor(userMsg("hi")))
	if err != nil {
		t.Fatal(err)
	}
	if want := []llm.Delta{{Kind: llm.DeltaText, Text: "Hel"}, {Kind: llm.DeltaText, Text: "lo "}, {Kind: llm.DeltaText, Text: "wörld 🎉"}}; !reflect.DeepEqual(ds, want) {
		t.Errorf("deltas = %#v", ds)
	}
	want := &llm.Response{Content: []message.Block{message.Text("Hello wörld 🎉")}, StopReason: event.StopEndTurn,
		Usage: message.Usage{InputTokens: 100, OutputTokens: 7, CacheReadTokens: 60, CacheCreationTokens: 20}}
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("response = %#v", resp)
	}
	r := srv.Requests()[0]
	if r.Path != "/v1/messages" || r.Header.Get("x-api-key") != testKey || r.Header.Get("anthropic-version") != "2023-06-01" ||
		r.Header.Get("Content-Type") != "application/json" || r.Header.Get("Authorization") != "" {
		t.Errorf("request = %s %v", r.Path, r.Header)
	}
	jsonEqual(t, r.Body, `{"model":"claude-test","max_tokens":16000,"system":"be brief","stream":true,
		"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`)
}

func TestAnthropicHeaders(t *testing.T) {
	srv, p := setupAn(t, Config{Headers: map[string]string{
		"anthropic-version": "2099-01-01", "anthropic-beta": "fancy-1"}}, llmtest.Reply{Text: []string{"ok"}})
	if _, _, err := wiretest.Collect(t, p, anRequestFor(userMsg("hi"))); err != nil {
		t.Fatal(err)
	}
	h := srv.Requests()[0].Header
	if _, has := h["X-Api-Key"]; has || h.Get("anthropic-version") != "2099-01-01" || h.Get("anthropic-beta") != "fancy-1" ||
		len(h.Values("anthropic-version")) != 1 {
		t.Errorf("headers = %v", h)
	}
}

func TestAnthropicMaxTokensAndThinking(t *testing.T) {
	tests := []struct {
		name     string
		cfg      Config
		reqMax   int
		wantMax  float64
		thinking string // JSON, "" for absent
	}{
		{"default", Config{}, 0, 16000, ""},
		{"config", Config{MaxTokens: 1000}, 0, 1000, ""},
		{"request wins", Config{MaxTokens: 1000}, 50, 50, ""},
		{"thinking off", Config{Thinking: "off"}, 0, 16000, ""},
		{"adaptive default", Config{Thinking: "adaptive"}, 0, 16000, `{"type":"enabled","budget_tokens":12000}`},
		{"adaptive 2000", Config{Thinking: "adaptive", MaxTokens: 2000}, 0, 2000, `{"type":"enabled","budget_tokens":1500}`},
		{"adaptive floor", Config{Thinking: "adaptive"}, 1200, 1200, `{"type":"enabled","budget_tokens":1024}`},
		{"adaptive no room", Config{Thinking: "adaptive"}, 1024, 1024, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, p := setupAn(t, tt.cfg, llmtest.Reply{Text: []string{"ok"}})
			req := anRequestFor(userMsg("hi"))
			req.MaxTokens = tt.reqMax
			if _, _, err := wiretest.Collect(t, p, req); err != nil {
				t.Fatal(err)
			}
			body := srv.Requests()[0].Body
			if body["max_tokens"] != tt.wantMax {
				t.Errorf("max_tokens = %v, want %v", body["max_tokens"], tt.wantMax)
			}
			th, has := body["thinking"]
			if tt.thinking == "" && has {
				t.Errorf("thinking sent: %v", th)
			} else if tt.thinking != "" {
				jsonEqual(t, th, tt.thinking)
			}
			for _, k := range []string{"temperature", "top_p", "top_k"} {
				if _, has := body[k]; has {
					t.Errorf("%s sent", k)
				}
			}
		})
	}
}

func TestAnthropicThinkingRoundTrip(t *testing.T) {
	srv, p := setupAn(t, Config{Thinking: "adaptive"},
		llmtest.Reply{RedactedThinking: []string{"ENC1", "ENC2"}, Thinking: []string{"let me ", "think"},
			Signature: "sig-Abc/+=", Text: []string{"Checking."},
			ToolCalls: []llmtest.ToolCall{{ID: "toolu_1", Name: "read", Arguments: `{"path":"a.txt"}`, Split: 4}}},
		llmtest.Reply{Text: []string{"done"}})
	first := anRequestFor(userMsg("read a.txt"))
	ds, resp, err := wiretest.Collect(t, p, first)
	if err != nil {
		t.Fatal(err)
	}
	// Each redacted block shows as a notice, never its data.
	wantDeltas := []llm.Delta{{Kind: llm.DeltaThinking, Text: message.RedactedThinkingNotice}, {Kind: llm.DeltaThinking, Text: message.RedactedThinkingNotice},
		{Kind: llm.DeltaThinking, Text: "let me "}, {Kind: llm.DeltaThinking, Text: "think"}, {Kind: llm.DeltaText, Text: "Checking."},
		llm.ToolCallDelta(0, "toolu_1", "read")}
	if !reflect.DeepEqual(ds, wantDeltas) {
		t.Errorf("deltas = %#v", ds)
	}
	wantContent := []message.Block{
		{Type: message.TypeRedactedThinking, Data: "ENC1"}, {Type: message.TypeRedactedThinking, Data: "ENC2"},
		{Type: message.TypeThinking, Thinking: "let me think", Signature: strp("sig-Abc/+=")},
		message.Text("Checking."),
		{Type: message.TypeToolUse, ID: "toolu_1", Name: "read", Arguments: `{"path":"a.txt"}`},
	}
	if !reflect.DeepEqual(resp.Content, wantContent) || resp.StopReason != llm.StopToolUse {
		t.Fatalf("response = %#v", resp)
	}

	next := anRequestFor(first.Messages[0], message.Message{Role: message.RoleAssistant, Content: resp.Content},
		message.Message{Role: message.RoleTool, Content: []message.Block{message.ToolResult("toolu_1", "read", "hello", false)}})
	if _, _, err := wiretest.Collect(t, p, next); err != nil {
		t.Fatal(err)
	}
	body := srv.Requests()[1].Body
	jsonEqual(t, body["messages"], `[
		{"role":"user","content":[{"type":"text","text":"read a.txt"}]},
		{"role":"assistant","content":[
			{"type":"redacted_thinking","data":"ENC1"},{"type":"redacted_thinking","data":"ENC2"},
			{"type":"thinking","thinking":"let me think","signature":"sig-Abc/+="},
			{"type":"text","text":"Checking."},
			{"type":"tool_use","id":"toolu_1","name":"read","input":{"path":"a.txt"}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"hello"}]}]`)
	if body["thinking"] == nil {
		t.Error("thinking turned off although the tool turn is signed")
	}
}

func TestAnthropicUnsignedToolTurnDisablesThinking(t *testing.T) {
	// The tool turn came from another provider: its thinking has no
	// signature, so it is dropped, and thinking must be off for this call.
	srv, p := setupAn(t, Config{Thinking: "adaptive"}, llmtest.Reply{Text: []string{"ok"}})
	req := anRequestFor(userMsg("go"),
		message.Message{Role: message.RoleAssistant, Content: []message.Block{
			{Type: message.TypeThinking, Thinking: "from elsewhere"}, {Type: message.TypeToolUse, ID: "c1", Name: "f"}}},
		message.Message{Role: message.RoleTool, Content: []message.Block{message.ToolResult("c1", "f", "r", false)}})
	if _, _, err := wiretest.Collect(t, p, req); err != nil {
		t.Fatal(err)
	}
	body := srv.Requests()[0].Body
	if _, has := body["thinking"]; has || strings.Contains(string(srv.Requests()[0].Raw), "from elsewhere") {
		t.Errorf("body = %s", srv.Requests()[0].Raw)
	}
}

func TestAnthropicToolUse(t *testing.T) {
	_, p := setupAn(t, Config{}, llmtest.Reply{Text: []string{"Looking."}, ChunkDelayMs: 2,
		ToolCalls: []llmtest.ToolCall{
			{ID: "toolu_a", Name: "read_file", Arguments: `{"path":"dïr/ünïcode.txt","limit":10}`, Split: 7},
			{ID: "toolu_b", Name: "now"},
			{Name: "anon", Arguments: `{"x":1}`, Split: 3}}})
	_, resp, err := wiretest.Collect(t, p, anRequestFor(userMsg("hi")))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Content) != 4 || resp.StopReason != llm.StopToolUse {
		t.Fatalf("response = %#v", resp)
	}
	want := []message.Block{message.Text("Looking."),
		{Type: message.TypeToolUse, ID: "toolu_a", Name: "read_file", Arguments: `{"path":"dïr/ünïcode.txt","limit":10}`},
		{Type: message.TypeToolUse, ID: "toolu_b", Name: "now", Arguments: `{}`},
		{Type: message.TypeToolUse, ID: resp.Content[3].ID, Name: "anon", Arguments: `{"x":1}`}}
	if !reflect.DeepEqual(resp.Content, want) || !strings.HasPrefix(resp.Content[3].ID, "call_") {
		t.Errorf("content = %#v", resp.Content)
	}
}

func TestAnthropicStopReasons(t *testing.T) {
	for reason, want := range map[string]event.StopReason{
		"": event.StopEndTurn, "stop": event.StopEndTurn, "end_turn": event.StopEndTurn, "stop_sequence": event.StopEndTurn,
		"length": event.StopMaxTokens, "max_tokens": event.StopMaxTokens, "tool_calls": llm.StopToolUse, "tool_use": llm.StopToolUse,
		"content_filter": event.StopRefusal, "refusal": event.StopRefusal, "pause_turn": llm.StopPauseTurn, "something_new": event.StopEndTurn,
	} {
		t.Run(reason, func(t *testing.T) {
			_, p := setupAn(t, Config{}, llmtest.Reply{Text: []string{"x"}, FinishReason: reason})
			_, resp, err := wiretest.Collect(t, p, anRequestFor(userMsg("hi")))
			if err != nil || resp.StopReason != want {
				t.Fatalf("got %v, %v; want %s", resp, err, want)
			}
		})
	}
	if got := anStopReason("something_new", true); got != llm.StopToolUse {
		t.Errorf("unknown reason with calls = %s", got)
	}
}

func TestBuildAnRequestJSON(t *testing.T) {
	req := &llm.Request{Model: "m", System: "sys",
		Messages: []message.Message{
			userMsg("one"),
			{Role: message.RoleUser, Content: []message.Block{message.Text("two"), message.Text(""),
				{Type: message.TypeImage, MimeType: "image/png", Data: "AAA="}}},
			{Role: message.RoleSystem, Content: []message.Block{message.Text("be careful")}},
			{Role: message.RoleAssistant, Content: []message.Block{
				{Type: message.TypeThinking, Thinking: "unsigned"},
				{Type: message.TypeThinking, Thinking: "empty sig", Signature: strp("")},
				{Type: message.TypeThinking, Thinking: "summary", Signature: strp("gAAAA-openai"), Origin: "openai_responses"},
				message.Text(""), message.Text("ok"),
				{Type: message.TypeToolUse, ID: "c1", Name: "f", Arguments: `{"a":1}`},
				{Type: message.TypeToolUse, ID: "c2", Name: "g", Arguments: `{"broken`}}},
			{Role: message.RoleTool, Content: []message.Block{
				message.ToolResult("c1", "f", "r1", false), message.ToolResult("c2", "g", "bad args", true)}},
			userMsg("and now?"),
			// Nothing sendable: the user messages around it merge.
			{Role: message.RoleAssistant, Content: []message.Block{{Type: message.TypeThinking, Thinking: "gemini thought"}}},
			userMsg("hello?"),
			{Role: message.RoleAssistant, Content: []message.Block{{Type: message.TypeToolUse, ID: "c3", Name: "h"}}},
			// A user interjection filed before the results: results go first.
			userMsg("wait"),
			{Role: message.RoleTool, Content: []message.Block{message.ToolResult("c3", "h", "", false)}},
		},
		Tools: []llm.ToolSpec{{Name: "f", Description: "does f", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}, {Name: "g"}},
	}
	got, err := json.Marshal(buildAnRequest(req, 100, nil))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"model":"m","max_tokens":100,"system":"sys\n\nbe careful","messages":[` +
		`{"role":"user","content":[{"type":"text","text":"one"},{"type":"text","text":"two"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAA="}}]},` +
		`{"role":"assistant","content":[{"type":"text","text":"ok"},{"type":"tool_use","id":"c1","name":"f","input":{"a":1}},{"type":"tool_use","id":"c2","name":"g","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"r1"},{"type":"tool_result","tool_use_id":"c2","content":"bad args","is_error":true},` +
		`{"type":"text","text":"and now?"},{"type":"text","text":"hello?"}]},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"c3","name":"h","input":{}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"c3"},{"type":"text","text":"wait"}]}],` +
		`"tools":[{"name":"f","description":"does f","input_schema":{"type":"object","properties":{}}},{"name":"g","input_schema":{"type":"object"}}],` +
		`"stream":true}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	minimal, _ := json.Marshal(buildAnRequest(&llm.Request{Model: "m"}, 10, thinkingFor("adaptive", "m", 10, 0, nil)))
	if string(minimal) != `{"model":"m","max_tokens":10,"messages":[],"stream":true}` {
		t.Errorf("minimal request = %s", minimal)
	}
}

func TestAnthropicErrors(t *testing.T) {
	tooLong := `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 250000 tokens > 200000 maximum"}}`
	tests := []wiretest.ErrCase{
		{Name: "401 echoing the key", Reply: llmtest.Reply{Status: 401, ErrorBody: `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key ` + testKey + `"}}`}, Contains: "HTTP 401: ", Status: 401},
		{Name: "400", Reply: llmtest.Reply{Status: 400}, Contains: "HTTP 400: ", Status: 400},
		{Name: "prompt too long", Reply: llmtest.Reply{Status: 400, ErrorBody: tooLong}, Contains: "prompt is too long", Status: 400, Long: true},
		{Name: "429", Reply: llmtest.Reply{Status: 429, RetryAfter: "2"}, Contains: "HTTP 429: ", Retryable: true, Status: 429},
		{Name: "529", Reply: llmtest.Reply{Status: 529, ErrorBody: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}, Contains: "HTTP 529: ", Retryable: true, Status: 529},
		{Name: "503", Reply: llmtest.Reply{Status: 503}, Contains: "HTTP 503: ", Retryable: true, Status: 503},
		{Name: "malformed", Reply: llmtest.Reply{Text: []string{"a"}, Malformed: true}, Contains: "malformed JSON in stream event 2 (content_block_delta)"},
		{Name: "overloaded mid-stream", Reply: llmtest.Reply{Text: []string{"a"}, ErrorEvent: "Overloaded"}, Contains: "server error in stream (overloaded_error): Overloaded", Retryable: true, Status: 529},
		{Name: "cut before any text", Reply: llmtest.Reply{Text: []string{"a", "b"}, CutAfter: 1}, Contains: "stream cut", Retryable: true, Cut: true},
		{Name: "cut after text", Reply: llmtest.Reply{Text: []string{"a", "b"}, CutAfter: 5}, Contains: "no message_stop after 4 events", Retryable: true, Cut: true},
	}
	for _, tt := range tests {
		t.Run(tt.Name, func(t *testing.T) {
			_, p := setupAn(t, Config{APIKey: testKey}, tt.Reply)
			_, _, err := wiretest.Collect(t, p, anRequestFor(userMsg("hi")))
			wiretest.CheckErrorClass(t, err, tt, testKey)
		})
	}
}

func TestAnthropicContextTooLongVariants(t *testing.T) {
	for body, want := range map[string]bool{
		`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 250000 tokens > 200000 maximum"}}`:                                   true,
		`{"type":"error","error":{"type":"invalid_request_error","message":"input length and ` + "`max_tokens`" + ` exceed context limit: 197626 + 8192 > 200000"}}`: true,
		`Prompt is too long`: true,
		`{"type":"error","error":{"type":"invalid_request_error","message":"messages: roles must alternate"}}`: false,
	} {
		err := anClassify(&llm.StatusError{Status: 400, Body: body})
		if errors.Is(err, llm.ErrContextTooLong) != want || llm.Retryable(err) {
			t.Errorf("%s: %v", body, err)
		}
	}
	if err := anClassify(&llm.StatusError{Status: 429, Body: "prompt is too long"}); errors.Is(err, llm.ErrContextTooLong) {
		t.Errorf("429 classified as too long: %v", err)
	}
}
