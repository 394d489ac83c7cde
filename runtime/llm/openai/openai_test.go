package openai

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/llm/internal/wiretest"
	"github.com/openheim/openheim/runtime/llm/llmtest"
	"github.com/openheim/openheim/runtime/llm/retry"
	"github.com/openheim/openheim/runtime/message"
)

const testKey = "sk-test-SECRET-4242"

// setup starts a fake server with replies and a client pointed at it.
func setup(t *testing.T, cfg Config, replies ...llmtest.Reply) (*llmtest.Server, llm.Provider) {
	t.Helper()
	return wiretest.Setup(t, cfg, New, replies...)
}

func simpleRequest() *llm.Request {
	return &llm.Request{Model: "gpt-test", System: "be brief",
		Messages: []message.Message{{Role: message.RoleUser, Content: []message.Block{message.Text("hi")}}}}
}

func TestOpenAIStreamText(t *testing.T) {
	srv, p := setup(t, Config{APIKey: testKey, Headers: map[string]string{"X-Title": "openheim"}},
		llmtest.Reply{Thinking: []string{"let me ", "think"}, Text: []string{"Hel", "lo ", "wörld 🎉"},
			Usage: &llmtest.Usage{Prompt: 100, Completion: 7, Cached: 60}})
	ds, resp, err := wiretest.Collect(t, p, simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	wantDeltas := []llm.Delta{{Kind: llm.DeltaThinking, Text: "let me "}, {Kind: llm.DeltaThinking, Text: "think"},
		{Kind: llm.DeltaText, Text: "Hel"}, {Kind: llm.DeltaText, Text: "lo "}, {Kind: llm.DeltaText, Text: "wörld 🎉"}}
	if !reflect.DeepEqual(ds, wantDeltas) {
		t.Errorf("deltas = %#v", ds)
	}
	want := &llm.Response{
		Content:    []message.Block{{Type: message.TypeThinking, Thinking: "let me think"}, message.Text("Hello wörld 🎉")},
		StopReason: event.StopEndTurn,
		Usage:      message.Usage{InputTokens: 40, OutputTokens: 7, CacheReadTokens: 60},
	}
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("response = %#v", resp)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer "+testKey ||
		r.Header.Get("X-Title") != "openheim" || r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("request = %s %v", r.Path, r.Header)
	}
	if r.Body["stream"] != true || !reflect.DeepEqual(r.Body["stream_options"], map[string]any{"include_usage": true}) {
		t.Errorf("body = %s", r.Raw)
	}
}

func TestOpenAINoKeyNoAuthorization(t *testing.T) {
	srv, p := setup(t, Config{}, llmtest.Reply{Text: []string{"ok"}})
	if _, _, err := wiretest.Collect(t, p, simpleRequest()); err != nil {
		t.Fatal(err)
	}
	if h := srv.Requests()[0].Header; h.Get("Authorization") != "" {
		t.Errorf("Authorization sent without a key: %v", h)
	}
}

func TestOpenAIMaxTokensField(t *testing.T) {
	tests := []struct {
		name       string
		cfg        Config
		reqMax     int
		wantField  string
		wantAbsent string
		want       float64
	}{
		{"compatible server", Config{MaxTokens: 1000}, 0, "max_tokens", "max_completion_tokens", 1000},
		{"kind openai", Config{MaxTokens: 1000, MaxCompletionTokens: true}, 0, "max_completion_tokens", "max_tokens", 1000},
		{"request overrides config", Config{MaxTokens: 1000}, 50, "max_tokens", "max_completion_tokens", 50},
		{"unset", Config{}, 0, "", "max_tokens", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, p := setup(t, tt.cfg, llmtest.Reply{Text: []string{"ok"}})
			req := simpleRequest()
			req.MaxTokens = tt.reqMax
			if _, _, err := wiretest.Collect(t, p, req); err != nil {
				t.Fatal(err)
			}
			body := srv.Requests()[0].Body
			if tt.wantField != "" && body[tt.wantField] != tt.want {
				t.Errorf("%s = %v, want %v (body %v)", tt.wantField, body[tt.wantField], tt.want, body)
			}
			if _, ok := body[tt.wantAbsent]; ok {
				t.Errorf("%s should be absent: %v", tt.wantAbsent, body)
			}
		})
	}
}

func TestOpenAIToolCalls(t *testing.T) {
	tests := []struct {
		name  string
		reply llmtest.Reply
		want  []message.Block // ids "" are checked as generated
		stop  event.StopReason
	}{
		{"split fragments", llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{ID: "call_a", Name: "read_file", Arguments: `{"path":"dïr/ünïcode.txt","limit":10}`, Split: 7},
			{ID: "call_b", Name: "list_dir", Arguments: `{"path":"."}`, Split: 3}}},
			[]message.Block{
				{Type: message.TypeToolUse, ID: "call_a", Name: "read_file", Arguments: `{"path":"dïr/ünïcode.txt","limit":10}`},
				{Type: message.TypeToolUse, ID: "call_b", Name: "list_dir", Arguments: `{"path":"."}`}}, llm.StopToolUse},
		{"text then call, split across reads", llmtest.Reply{Text: []string{"Looking."}, ChunkDelayMs: 5,
			ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "grep", Arguments: `{"q":"a b"}`, Split: 5}}},
			[]message.Block{message.Text("Looking."), {Type: message.TypeToolUse, ID: "c1", Name: "grep", Arguments: `{"q":"a b"}`}},
			llm.StopToolUse},
		{"missing ids generated", llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{Name: "a", Arguments: `{}`}, {Name: "b", Arguments: `{"x":1}`, Split: 2}}},
			[]message.Block{{Type: message.TypeToolUse, Name: "a", Arguments: `{}`},
				{Type: message.TypeToolUse, Name: "b", Arguments: `{"x":1}`}}, llm.StopToolUse},
		{"empty arguments become {}", llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c", Name: "now"}}},
			[]message.Block{{Type: message.TypeToolUse, ID: "c", Name: "now", Arguments: `{}`}}, llm.StopToolUse},
		{"stop with calls is tool_use", llmtest.Reply{FinishReason: "stop", ToolCalls: []llmtest.ToolCall{{ID: "c", Name: "x", Arguments: `{}`}}},
			[]message.Block{{Type: message.TypeToolUse, ID: "c", Name: "x", Arguments: `{}`}}, llm.StopToolUse},
		{"length with calls stays max_tokens", llmtest.Reply{FinishReason: "length", ToolCalls: []llmtest.ToolCall{{ID: "c", Name: "x", Arguments: `{"a":`}}},
			[]message.Block{{Type: message.TypeToolUse, ID: "c", Name: "x", Arguments: `{"a":`}}, event.StopMaxTokens},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, p := setup(t, Config{}, tt.reply)
			_, resp, err := wiretest.Collect(t, p, simpleRequest())
			if err != nil {
				t.Fatal(err)
			}
			if resp.StopReason != tt.stop || len(resp.Content) != len(tt.want) {
				t.Fatalf("got %#v", resp)
			}
			seen := map[string]bool{}
			for i, b := range resp.Content {
				w := tt.want[i]
				if w.Type == message.TypeToolUse && w.ID == "" {
					if !strings.HasPrefix(b.ID, "call_") || len(b.ID) < 10 || seen[b.ID] {
						t.Errorf("generated id %q not unique/well-formed", b.ID)
					}
					seen[b.ID] = true
					w.ID = b.ID
				}
				if !reflect.DeepEqual(b, w) {
					t.Errorf("block %d = %#v, want %#v", i, b, w)
				}
			}
		})
	}
}

func TestOpenAIFinishReasons(t *testing.T) {
	for reason, want := range map[string]event.StopReason{
		"stop": event.StopEndTurn, "length": event.StopMaxTokens, "content_filter": event.StopRefusal,
		"tool_calls": llm.StopToolUse, "function_call": llm.StopToolUse, "eos": event.StopEndTurn,
	} {
		t.Run(reason, func(t *testing.T) {
			_, p := setup(t, Config{}, llmtest.Reply{Text: []string{"x"}, FinishReason: reason})
			_, resp, err := wiretest.Collect(t, p, simpleRequest())
			if err != nil || resp.StopReason != want {
				t.Fatalf("got %v, %v; want %s", resp, err, want)
			}
		})
	}
}

func TestOpenAIWireVariants(t *testing.T) {
	base := llmtest.Reply{Text: []string{"a", "b"}, ToolCalls: []llmtest.ToolCall{{ID: "c", Name: "f", Arguments: `{"k":"v"}`, Split: 3}},
		Usage: &llmtest.Usage{Prompt: 5, Completion: 2}}
	variants := map[string]func(r *llmtest.Reply){
		"plain":      func(*llmtest.Reply) {},
		"crlf":       func(r *llmtest.Reply) { r.CRLF = true },
		"no space":   func(r *llmtest.Reply) { r.NoSpace = true },
		"keep-alive": func(r *llmtest.Reply) { r.KeepAlive = true },
		"error null": func(r *llmtest.Reply) { r.ErrorNull = true },
		"all":        func(r *llmtest.Reply) { r.CRLF, r.NoSpace, r.KeepAlive, r.ErrorNull = true, true, true, true },
	}
	want := &llm.Response{Content: []message.Block{message.Text("ab"),
		{Type: message.TypeToolUse, ID: "c", Name: "f", Arguments: `{"k":"v"}`}},
		StopReason: llm.StopToolUse, Usage: message.Usage{InputTokens: 5, OutputTokens: 2}}
	for name, mod := range variants {
		t.Run(name, func(t *testing.T) {
			r := base
			mod(&r)
			_, p := setup(t, Config{}, r)
			_, resp, err := wiretest.Collect(t, p, simpleRequest())
			if err != nil || !reflect.DeepEqual(resp, want) {
				t.Fatalf("got %#v, %v", resp, err)
			}
		})
	}
}

func TestOpenAIRejectStreamOptions(t *testing.T) {
	srv, p := setup(t, Config{},
		llmtest.Reply{Text: []string{"one"}, RejectStreamOptions: true, Usage: &llmtest.Usage{Prompt: 1, Completion: 1}},
		llmtest.Reply{Text: []string{"two"}, RejectStreamOptions: true})
	for i, want := range []string{"one", "two"} {
		_, resp, err := wiretest.Collect(t, p, simpleRequest())
		if err != nil || len(resp.Content) != 1 || resp.Content[0].Text != want {
			t.Fatalf("call %d: %#v, %v", i, resp, err)
		}
		if resp.Usage != (message.Usage{}) {
			t.Errorf("usage without include_usage: %+v", resp.Usage)
		}
	}
	reqs := srv.Requests()
	// First call: rejected, then retried without; second call: remembered.
	wantOpts := []bool{true, false, false}
	if len(reqs) != len(wantOpts) {
		t.Fatalf("%d requests, want %d", len(reqs), len(wantOpts))
	}
	for i, w := range wantOpts {
		if _, has := reqs[i].Body["stream_options"]; has != w {
			t.Errorf("request %d stream_options present = %v, want %v", i+1, has, w)
		}
	}
}

func TestOpenAIErrors(t *testing.T) {
	tests := []wiretest.ErrCase{
		{Name: "401", Reply: llmtest.Reply{Status: 401, ErrorBody: `{"error":{"message":"Incorrect API key provided: ` + testKey + `"}}`}, Contains: "HTTP 401: ", Status: 401},
		{Name: "400", Reply: llmtest.Reply{Status: 400}, Contains: "HTTP 400: ", Status: 400},
		{Name: "429", Reply: llmtest.Reply{Status: 429, RetryAfter: "2"}, Contains: "HTTP 429: ", Retryable: true, Status: 429},
		{Name: "503", Reply: llmtest.Reply{Status: 503}, Contains: "HTTP 503: ", Retryable: true, Status: 503},
		{Name: "malformed", Reply: llmtest.Reply{Text: []string{"a"}, Malformed: true}, Contains: "malformed JSON in stream chunk 2"},
		{Name: "cut before any text", Reply: llmtest.Reply{Text: []string{"a", "b"}, CutAfter: 1}, Contains: "stream cut", Retryable: true, Cut: true},
		{Name: "cut after text", Reply: llmtest.Reply{Text: []string{"a", "b"}, CutAfter: 2}, Contains: "stream cut", Retryable: true, Cut: true},
		{Name: "cut before DONE", Reply: llmtest.Reply{Text: []string{"a"}, CutAfter: 3}, Contains: "no [DONE] after 3 chunks", Retryable: true, Cut: true},
	}
	for _, tt := range tests {
		t.Run(tt.Name, func(t *testing.T) {
			_, p := setup(t, Config{APIKey: testKey}, tt.Reply)
			_, _, err := wiretest.Collect(t, p, simpleRequest())
			wiretest.CheckErrorClass(t, err, tt, testKey)
		})
	}
}

func TestOpenAIRetryAfterParsed(t *testing.T) {
	_, p := setup(t, Config{}, llmtest.Reply{Status: 429, RetryAfter: "3"})
	_, _, err := wiretest.Collect(t, p, simpleRequest())
	var se *llm.StatusError
	if !errors.As(err, &se) || se.RetryAfter != 3*time.Second {
		t.Fatalf("err = %#v", err)
	}
}

func TestOpenAIErrorChunk(t *testing.T) {
	// The fake server has no mid-stream error option, so drive the decoder
	// directly with what OpenRouter sends.
	tests := []struct {
		name, stream, contains string
		retryable              bool
	}{
		{"upstream 502", `data: {"error":{"code":502,"message":"Provider returned error"}}` + "\n\n", "HTTP 502: Provider returned error", true},
		{"typed", `data: {"error":{"type":"server_error","message":"boom"},"choices":[]}` + "\n\n", "server error in stream (server_error): boom", false},
		{"string", `data: {"error":"overloaded"}` + "\n\n", `server error in stream: "overloaded"`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeOAStream(strings.NewReader(tt.stream), 0, nil)
			if err == nil || !strings.Contains(err.Error(), tt.contains) || llm.Retryable(err) != tt.retryable {
				t.Fatalf("err = %v (retryable %v)", err, llm.Retryable(err))
			}
		})
	}
}

func TestOpenAIEmptyScript(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	p := New(Config{BaseURL: srv.URL()})
	_, err := p.Stream(context.Background(), simpleRequest(), nil)
	if err == nil || !strings.Contains(err.Error(), "HTTP 500: llmtest: no scripted reply for request 1") {
		t.Fatalf("err = %v", err)
	}
}

func TestOpenAIJSONInsteadOfStream(t *testing.T) {
	// A server that ignores stream:true answers one JSON object.
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = w.Write([]byte(`{"choices":[{"message":{"content":"hi"}}]}`))
	}))
	defer ts.Close()
	_, err := New(Config{BaseURL: ts.URL}).Stream(context.Background(), simpleRequest(), nil)
	if err == nil || !strings.Contains(err.Error(), "expected an event stream, got application/json") || llm.Retryable(err) {
		t.Fatalf("err = %v", err)
	}
}

func TestBuildOARequestJSON(t *testing.T) {
	req := &llm.Request{Model: "m", System: "sys",
		Messages: []message.Message{
			{Role: message.RoleUser, Content: []message.Block{message.Text("look"), {Type: message.TypeImage, MimeType: "image/png", Data: "AAA="}}},
			{Role: message.RoleAssistant, Content: []message.Block{{Type: message.TypeThinking, Thinking: "secret"},
				{Type: message.TypeRedactedThinking, Data: "xx"}, message.Text("ok"),
				{Type: message.TypeToolUse, ID: "c1", Name: "f", Arguments: `{"a":1}`}, {Type: message.TypeToolUse, ID: "c2", Name: "g"}}},
			{Role: message.RoleTool, Content: []message.Block{message.ToolResult("c1", "f", "r1", false), message.ToolResult("c2", "g", "r2", true)}},
			{Role: message.RoleAssistant, Content: []message.Block{{Type: message.TypeToolUse, ID: "c3", Name: "h", Arguments: `{}`}}},
			{Role: message.RoleTool, Content: []message.Block{message.ToolResult("c3", "h", "", false)}},
			{Role: message.RoleUser, Content: []message.Block{message.Text("a"), message.Text("b")}},
		},
		Tools: []llm.ToolSpec{{Name: "f", Description: "does f", Parameters: json.RawMessage(`{"type":"object"}`)}, {Name: "g"}},
	}
	got, err := json.Marshal(buildOARequest(req, 0, false, true))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"model":"m","messages":[` +
		`{"role":"system","content":"sys"},` +
		`{"role":"user","content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAA="}}]},` +
		`{"role":"assistant","content":"ok","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}},{"id":"c2","type":"function","function":{"name":"g","arguments":"{}"}}]},` +
		`{"role":"tool","content":"r1","tool_call_id":"c1"},{"role":"tool","content":"r2","tool_call_id":"c2"},` +
		`{"role":"assistant","tool_calls":[{"id":"c3","type":"function","function":{"name":"h","arguments":"{}"}}]},` +
		`{"role":"tool","content":"","tool_call_id":"c3"},` +
		`{"role":"user","content":"a\nb"}],` +
		`"stream":true,"stream_options":{"include_usage":true},` +
		`"tools":[{"type":"function","function":{"name":"f","description":"does f","parameters":{"type":"object"}}},{"type":"function","function":{"name":"g","parameters":{}}}]}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}

	noTools, _ := json.Marshal(buildOARequest(&llm.Request{Model: "m"}, 10, true, false))
	if string(noTools) != `{"model":"m","messages":[],"stream":true,"max_completion_tokens":10}` {
		t.Errorf("minimal request = %s", noTools)
	}
}

func TestOpenAIContextTooLong(t *testing.T) {
	for _, body := range []string{
		`{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}`,
		`{"error":{"message":"the request exceeds the available context size, try increasing it","code":400}}`,
	} {
		srv := llmtest.New()
		srv.Enqueue(llmtest.Reply{Status: 400, ErrorBody: body})
		p := retry.Wrap(New(Config{BaseURL: srv.URL()}), retry.Policy{BaseDelay: time.Millisecond})
		_, err := p.Stream(context.Background(), &llm.Request{Model: "m"}, nil)
		srv.Close()
		var se *llm.StatusError
		if !errors.Is(err, llm.ErrContextTooLong) || !errors.As(err, &se) || len(srv.Requests()) != 1 {
			t.Errorf("%s: err = %v after %d requests", body, err, len(srv.Requests()))
		}
	}
	srv := llmtest.New()
	defer srv.Close()
	srv.Enqueue(llmtest.Reply{Status: 400, ErrorBody: `{"error":{"message":"invalid tool schema"}}`})
	_, err := New(Config{BaseURL: srv.URL()}).Stream(context.Background(), &llm.Request{Model: "m"}, nil)
	if errors.Is(err, llm.ErrContextTooLong) {
		t.Errorf("an unrelated 400 is not context too long: %v", err)
	}
}

// TestOpenAIToolCallStarts: each tool call is announced once, as its first
// fragment arrives, with its place among the reply's calls: the place of
// its tool_use block in the response.
func TestOpenAIToolCallStarts(t *testing.T) {
	_, p := setup(t, Config{}, llmtest.Reply{Text: []string{"Looking."}, ToolCalls: []llmtest.ToolCall{
		{ID: "call_a", Name: "read", Arguments: `{"path":"a"}`, Split: 3}, {ID: "call_b", Name: "list", Arguments: `{}`}}})
	ds, resp, err := wiretest.Collect(t, p, simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	var starts []llm.CallStart
	for _, d := range ds {
		if d.Kind == llm.DeltaToolCall {
			starts = append(starts, *d.Call)
		}
	}
	if want := []llm.CallStart{{Index: 0, ID: "call_a", Name: "read"}, {Index: 1, ID: "call_b", Name: "list"}}; !reflect.DeepEqual(starts, want) {
		t.Errorf("starts = %+v", starts)
	}
	if uses := (message.Message{Content: resp.Content}).ToolUses(); len(uses) != 2 || uses[1].ID != "call_b" {
		t.Errorf("tool uses = %+v", uses)
	}
}
