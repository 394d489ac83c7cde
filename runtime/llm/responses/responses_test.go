package responses

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	turnevent "github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/llm/internal/wiretest"
	"github.com/openheim/openheim/runtime/llm/llmtest"
	"github.com/openheim/openheim/runtime/llm/retry"
	"github.com/openheim/openheim/runtime/message"
)

const testKey = "sk-test-SECRET-4242"

func setup(t *testing.T, cfg Config, replies ...llmtest.Reply) (*llmtest.Server, llm.Provider) {
	t.Helper()
	return wiretest.Setup(t, cfg, New, replies...)
}

func llmRequest(model string, msgs ...message.Message) *llm.Request {
	return &llm.Request{Model: model, System: "be brief", Messages: msgs}
}

func user(text string) message.Message {
	return message.Message{Role: message.RoleUser, Content: []message.Block{message.Text(text)}}
}

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

// TestResponsesText: text deltas stream as they come, usage splits cached
// input from the rest (reasoning tokens are part of the output), and the
// request is what Codex sends: POST /v1/responses, Bearer key, stream and
// store false, the system prompt as instructions, no reasoning for a
// model that has none.
func TestResponsesText(t *testing.T) {
	srv, p := setup(t, Config{APIKey: testKey, MaxTokens: 500},
		llmtest.Reply{Text: []string{"Hel", "lo ", "wörld 🎉"}, Usage: &llmtest.Usage{Prompt: 100, Completion: 30, Cached: 60, Reasoning: 20}})
	ds, resp, err := wiretest.Collect(t, p, llmRequest("gpt-4.1", user("hi")))
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Delta{{Kind: llm.DeltaText, Text: "Hel"}, {Kind: llm.DeltaText, Text: "lo "}, {Kind: llm.DeltaText, Text: "wörld 🎉"}}
	if !reflect.DeepEqual(ds, want) {
		t.Errorf("deltas = %#v", ds)
	}
	wantResp := &llm.Response{Content: []message.Block{message.Text("Hello wörld 🎉")}, StopReason: turnevent.StopEndTurn,
		Usage: message.Usage{InputTokens: 40, OutputTokens: 30, CacheReadTokens: 60}}
	if !reflect.DeepEqual(resp, wantResp) {
		t.Errorf("response = %#v", resp)
	}
	rq := srv.Requests()[0]
	if rq.Path != "/v1/responses" || rq.Header.Get("Authorization") != "Bearer "+testKey || rq.Header.Get("Accept") != "text/event-stream" {
		t.Errorf("request %s %v", rq.Path, rq.Header)
	}
	jsonEqual(t, rq.Body, `{"model":"gpt-4.1","instructions":"be brief","max_output_tokens":500,"store":false,"stream":true,
		"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}]}`)
}

// TestResponsesFunctionCalls: arguments split over deltas are joined per
// call, the call ids are the call_id, and the tools go out as non-strict
// functions.
func TestResponsesFunctionCalls(t *testing.T) {
	srv, p := setup(t, Config{}, llmtest.Reply{Text: []string{"Looking."}, ToolCalls: []llmtest.ToolCall{
		{ID: "call_a", Name: "read_file", Arguments: `{"path":"dïr/ünïcode.txt","limit":10}`, Split: 7},
		{ID: "call_b", Name: "list_dir", Arguments: `{"path":"."}`, Split: 3}}})
	req := llmRequest("gpt-4.1", user("look"))
	req.Tools = []llm.ToolSpec{{Name: "read_file", Description: "reads", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
		{Name: "list_dir"}}
	_, resp, err := wiretest.Collect(t, p, req)
	if err != nil {
		t.Fatal(err)
	}
	want := []message.Block{message.Text("Looking."),
		{Type: message.TypeToolUse, ID: "call_a", Name: "read_file", Arguments: `{"path":"dïr/ünïcode.txt","limit":10}`},
		{Type: message.TypeToolUse, ID: "call_b", Name: "list_dir", Arguments: `{"path":"."}`}}
	if !reflect.DeepEqual(resp.Content, want) || resp.StopReason != llm.StopToolUse {
		t.Fatalf("response = %#v", resp)
	}
	body := srv.Requests()[0].Body
	jsonEqual(t, body["tools"], `[{"type":"function","name":"read_file","description":"reads","strict":false,
		"parameters":{"type":"object","properties":{"path":{"type":"string"}}}},
		{"type":"function","name":"list_dir","strict":false,"parameters":{}}]`)
	if body["tool_choice"] != "auto" {
		t.Errorf("tool_choice = %v", body["tool_choice"])
	}
}

// TestResponsesReasoningRoundTrip: a reasoning model is asked for summaries
// and encrypted reasoning; the summary streams as thought chunks, the
// encrypted item is kept on the thinking block (marked as this wire's) and
// goes back, without an id, before the call it led to, followed by the
// tool's output.
func TestResponsesReasoningRoundTrip(t *testing.T) {
	srv, p := setup(t, Config{Thinking: "adaptive"},
		llmtest.Reply{Thinking: []string{"**Plan**", " read it"}, Encrypted: "gAAAAB-enc==",
			ToolCalls: []llmtest.ToolCall{{ID: "call_1", Name: "read", Arguments: `{"path":"a.txt"}`, Split: 4}}},
		llmtest.Reply{Text: []string{"done"}})
	first := llmRequest("gpt-5.1-codex", user("read a.txt"))
	ds, resp, err := wiretest.Collect(t, p, first)
	if err != nil {
		t.Fatal(err)
	}
	if want := []llm.Delta{{Kind: llm.DeltaThinking, Text: "**Plan**", Summary: true}, {Kind: llm.DeltaThinking, Text: " read it", Summary: true},
		llm.ToolCallDelta(0, "call_1", "read")}; !reflect.DeepEqual(ds, want) {
		t.Errorf("deltas = %#v", ds)
	}
	enc := "gAAAAB-enc=="
	want := []message.Block{{Type: message.TypeThinking, Thinking: "**Plan** read it", Signature: &enc, Origin: Origin},
		{Type: message.TypeToolUse, ID: "call_1", Name: "read", Arguments: `{"path":"a.txt"}`}}
	if !reflect.DeepEqual(resp.Content, want) || resp.StopReason != llm.StopToolUse {
		t.Fatalf("response = %#v", resp)
	}
	body := srv.Requests()[0].Body
	jsonEqual(t, body["reasoning"], `{"summary":"auto"}`)
	jsonEqual(t, body["include"], `["reasoning.encrypted_content"]`)

	next := llmRequest("gpt-5.1-codex", first.Messages[0], message.Message{Role: message.RoleAssistant, Content: resp.Content},
		message.Message{Role: message.RoleTool, Content: []message.Block{message.ToolResult("call_1", "read", "hello", false)}})
	if _, _, err := wiretest.Collect(t, p, next); err != nil {
		t.Fatal(err)
	}
	jsonEqual(t, srv.Requests()[1].Body["input"], `[
		{"type":"message","role":"user","content":[{"type":"input_text","text":"read a.txt"}]},
		{"type":"reasoning","summary":[{"type":"summary_text","text":"**Plan** read it"}],"encrypted_content":"gAAAAB-enc=="},
		{"type":"function_call","call_id":"call_1","name":"read","arguments":"{\"path\":\"a.txt\"}"},
		{"type":"function_call_output","call_id":"call_1","output":"hello"}]`)
}

// TestResponsesInputItems: every block kind of a history in input items,
// in order; thinking from other wires (no origin) is left out.
func TestResponsesInputItems(t *testing.T) {
	sig := "anthropic-sig"
	req := llmRequest("m",
		message.Message{Role: message.RoleUser, Content: []message.Block{message.Text("look"), {Type: message.TypeImage, MimeType: "image/png", Data: "AAA="}}},
		message.Message{Role: message.RoleSystem, Content: []message.Block{message.Text("be careful")}},
		message.Message{Role: message.RoleAssistant, Content: []message.Block{
			{Type: message.TypeThinking, Thinking: "claude thought", Signature: &sig},
			{Type: message.TypeRedactedThinking, Data: "R"},
			message.Text("a"), message.Text("b"), {Type: message.TypeToolUse, ID: "c1", Name: "f"}, message.Text("after")}},
		message.Message{Role: message.RoleTool, Content: []message.Block{message.ToolResult("c1", "f", "failed", true)}})
	got, _ := json.Marshal(buildRequest(req, 0, false).Input)
	var v any
	_ = json.Unmarshal(got, &v)
	jsonEqual(t, v, `[
		{"type":"message","role":"user","content":[{"type":"input_text","text":"look"},{"type":"input_image","image_url":"data:image/png;base64,AAA="}]},
		{"type":"message","role":"system","content":[{"type":"input_text","text":"be careful"}]},
		{"type":"message","role":"assistant","content":[{"type":"output_text","text":"a"},{"type":"output_text","text":"b"}]},
		{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},
		{"type":"message","role":"assistant","content":[{"type":"output_text","text":"after"}]},
		{"type":"function_call_output","call_id":"c1","output":"failed"}]`)
}

// TestResponsesReasoningByModel: which requests ask for reasoning.
func TestResponsesReasoningByModel(t *testing.T) {
	yes, no := true, false
	for _, tt := range []struct {
		thinking string
		model    string
		override *bool
		want     bool
	}{
		{"", "gpt-5", nil, true}, {"adaptive", "o3", nil, true}, {"budget", "o4-mini", nil, true},
		{"", "gpt-5.1-codex-max", nil, true}, {"", "openai/gpt-oss-120b", nil, true}, {"", "codex-mini-latest", nil, true},
		{"", "gpt-4.1", nil, false}, {"", "gpt-4o-mini", nil, false}, {"", "gpt-5-chat-latest", nil, false},
		{"", "qwen3", nil, false}, {"off", "gpt-5", nil, false},
		{"adaptive", "qwen3", &yes, true}, {"", "gpt-5", &no, false}, {"off", "gpt-5", &yes, false},
	} {
		if got := reasoningFor(tt.thinking, tt.model, tt.override); got != tt.want {
			t.Errorf("reasoningFor(%q, %q, %v) = %v", tt.thinking, tt.model, tt.override, got)
		}
	}
}

// TestResponsesStopReasons: incomplete responses and refusals.
func TestResponsesStopReasons(t *testing.T) {
	for _, tt := range []struct {
		name  string
		reply llmtest.Reply
		text  string
		want  turnevent.StopReason
	}{
		{"max_output_tokens", llmtest.Reply{Text: []string{"cut"}, FinishReason: "length"}, "cut", turnevent.StopMaxTokens},
		{"content_filter", llmtest.Reply{FinishReason: "content_filter"}, "", turnevent.StopRefusal},
		{"refusal", llmtest.Reply{Refusal: []string{"I can't ", "help with that."}}, "I can't help with that.", turnevent.StopRefusal},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, p := setup(t, Config{}, tt.reply)
			ds, resp, err := wiretest.Collect(t, p, llmRequest("gpt-4.1", user("hi")))
			if err != nil {
				t.Fatal(err)
			}
			var shown strings.Builder
			for _, d := range ds {
				shown.WriteString(d.Text)
			}
			if resp.StopReason != tt.want || joinText(resp) != tt.text || shown.String() != tt.text {
				t.Errorf("stop %q, content %#v, shown %q", resp.StopReason, resp.Content, shown.String())
			}
		})
	}
}

func TestResponsesErrors(t *testing.T) {
	tooLong := `{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}`
	tests := []wiretest.ErrCase{
		{Name: "401", Reply: llmtest.Reply{Status: 401, ErrorBody: `{"error":{"message":"Incorrect API key provided: ` + testKey + `"}}`}, Contains: "HTTP 401: ", Status: 401},
		{Name: "429", Reply: llmtest.Reply{Status: 429, RetryAfter: "2"}, Contains: "HTTP 429: ", Retryable: true, Status: 429},
		{Name: "500", Reply: llmtest.Reply{Status: 500}, Contains: "HTTP 500: ", Retryable: true, Status: 500},
		{Name: "context too long", Reply: llmtest.Reply{Status: 400, ErrorBody: tooLong}, Contains: "context window", Status: 400, Long: true},
		{Name: "error event", Reply: llmtest.Reply{Text: []string{"a"}, ErrorEvent: "The server had an error"}, Contains: "HTTP 500: The server had an error",
			Retryable: true, Status: 500},
		{Name: "malformed", Reply: llmtest.Reply{Text: []string{"a"}, Malformed: true}, Contains: "malformed JSON in stream event 2"},
		{Name: "cut", Reply: llmtest.Reply{Text: []string{"a", "b"}, CutAfter: 5}, Contains: "stream cut", Retryable: true, Cut: true},
		{Name: "cut before completed", Reply: llmtest.Reply{Text: []string{"a"}, CutAfter: 8},
			Contains: "no response.completed", Retryable: true, Cut: true},
	}
	for _, tt := range tests {
		t.Run(tt.Name, func(t *testing.T) {
			_, p := setup(t, Config{APIKey: testKey}, tt.Reply)
			_, _, err := wiretest.Collect(t, p, llmRequest("gpt-4.1", user("hi")))
			wiretest.CheckErrorClass(t, err, tt, testKey)
		})
	}
}

// TestResponsesRetry: the one retry loop retries a 503 and a stream cut
// before anything was shown, like every other wire.
func TestResponsesRetry(t *testing.T) {
	srv, p := setup(t, Config{}, llmtest.Reply{Status: 503}, llmtest.Reply{Text: []string{"a"}, CutAfter: 2},
		llmtest.Reply{Text: []string{"ok"}})
	_, resp, err := wiretest.Collect(t, retry.Wrap(p, wiretest.FastPolicy), llmRequest("gpt-4.1", user("hi")))
	if err != nil || joinText(resp) != "ok" || len(srv.Requests()) != 3 {
		t.Fatalf("resp %#v, err %v, %d requests", resp, err, len(srv.Requests()))
	}
}

func joinText(resp *llm.Response) string {
	if resp == nil {
		return ""
	}
	return message.Message{Content: resp.Content}.JoinText()
}
