package llm

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

	"github.com/openheim/openheim/runtime/llm/llmtest"
	"github.com/openheim/openheim/runtime/message"
)

const testKey = "sk-test-SECRET-4242"

// setup starts a fake server with replies and a client pointed at it.
func setup(t *testing.T, cfg OpenAIConfig, replies ...llmtest.Reply) (*llmtest.Server, Provider) {
	t.Helper()
	srv := llmtest.New()
	t.Cleanup(srv.Close)
	srv.Enqueue(replies...)
	cfg.BaseURL = srv.URL()
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	return srv, NewOpenAI(cfg)
}

func simpleRequest() *Request {
	return &Request{Model: "gpt-test", System: "be brief",
		Messages: []message.Message{{Role: message.RoleUser, Content: []message.Block{message.Text("hi")}}}}
}

// collect runs one call and returns the forwarded deltas.
func collect(t *testing.T, p Provider, req *Request) ([]Delta, *Response, error) {
	t.Helper()
	var ds []Delta
	resp, err := p.Stream(context.Background(), req, func(d Delta) error {
		ds = append(ds, d)
		return nil
	})
	return ds, resp, err
}

func TestOpenAIStreamText(t *testing.T) {
	srv, p := setup(t, OpenAIConfig{APIKey: testKey, Headers: map[string]string{"X-Title": "openheim"}},
		llmtest.Reply{Thinking: []string{"let me ", "think"}, Text: []string{"Hel", "lo ", "wörld 🎉"},
			Usage: &llmtest.Usage{Prompt: 100, Completion: 7, Cached: 60}})
	ds, resp, err := collect(t, p, simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	wantDeltas := []Delta{{DeltaThinking, "let me "}, {DeltaThinking, "think"},
		{DeltaText, "Hel"}, {DeltaText, "lo "}, {DeltaText, "wörld 🎉"}}
	if !reflect.DeepEqual(ds, wantDeltas) {
		t.Errorf("deltas = %#v", ds)
	}
	want := &Response{
		Content:    []message.Block{{Type: message.TypeThinking, Thinking: "let me think"}, message.Text("Hello wörld 🎉")},
		StopReason: StopEndTurn,
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
	srv, p := setup(t, OpenAIConfig{}, llmtest.Reply{Text: []string{"ok"}})
	if _, _, err := collect(t, p, simpleRequest()); err != nil {
		t.Fatal(err)
	}
	if h := srv.Requests()[0].Header; h.Get("Authorization") != "" {
		t.Errorf("Authorization sent without a key: %v", h)
	}
}

func TestOpenAIMaxTokensField(t *testing.T) {
	tests := []struct {
		name       string
		cfg        OpenAIConfig
		reqMax     int
		wantField  string
		wantAbsent string
		want       float64
	}{
		{"compatible server", OpenAIConfig{MaxTokens: 1000}, 0, "max_tokens", "max_completion_tokens", 1000},
		{"kind openai", OpenAIConfig{MaxTokens: 1000, MaxCompletionTokens: true}, 0, "max_completion_tokens", "max_tokens", 1000},
		{"request overrides config", OpenAIConfig{MaxTokens: 1000}, 50, "max_tokens", "max_completion_tokens", 50},
		{"unset", OpenAIConfig{}, 0, "", "max_tokens", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, p := setup(t, tt.cfg, llmtest.Reply{Text: []string{"ok"}})
			req := simpleRequest()
			req.MaxTokens = tt.reqMax
			if _, _, err := collect(t, p, req); err != nil {
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
		stop  string
	}{
		{"split fragments", llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{ID: "call_a", Name: "read_file", Arguments: `{"path":"dïr/ünïcode.txt","limit":10}`, Split: 7},
			{ID: "call_b", Name: "list_dir", Arguments: `{"path":"."}`, Split: 3}}},
			[]message.Block{
				{Type: message.TypeToolUse, ID: "call_a", Name: "read_file", Arguments: `{"path":"dïr/ünïcode.txt","limit":10}`},
				{Type: message.TypeToolUse, ID: "call_b", Name: "list_dir", Arguments: `{"path":"."}`}}, StopToolUse},
		{"text then call, split across reads", llmtest.Reply{Text: []string{"Looking."}, ChunkDelayMs: 5,
			ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "grep", Arguments: `{"q":"a b"}`, Split: 5}}},
			[]message.Block{message.Text("Looking."), {Type: message.TypeToolUse, ID: "c1", Name: "grep", Arguments: `{"q":"a b"}`}},
			StopToolUse},
		{"missing ids generated", llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{Name: "a", Arguments: `{}`}, {Name: "b", Arguments: `{"x":1}`, Split: 2}}},
			[]message.Block{{Type: message.TypeToolUse, Name: "a", Arguments: `{}`},
				{Type: message.TypeToolUse, Name: "b", Arguments: `{"x":1}`}}, StopToolUse},
		{"empty arguments become {}", llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c", Name: "now"}}},
			[]message.Block{{Type: message.TypeToolUse, ID: "c", Name: "now", Arguments: `{}`}}, StopToolUse},
		{"stop with calls is tool_use", llmtest.Reply{FinishReason: "stop", ToolCalls: []llmtest.ToolCall{{ID: "c", Name: "x", Arguments: `{}`}}},
			[]message.Block{{Type: message.TypeToolUse, ID: "c", Name: "x", Arguments: `{}`}}, StopToolUse},
		{"length with calls stays max_tokens", llmtest.Reply{FinishReason: "length", ToolCalls: []llmtest.ToolCall{{ID: "c", Name: "x", Arguments: `{"a":`}}},
			[]message.Block{{Type: message.TypeToolUse, ID: "c", Name: "x", Arguments: `{"a":`}}, StopMaxTokens},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, p := setup(t, OpenAIConfig{}, tt.reply)
			_, resp, err := collect(t, p, simpleRequest())
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
	for reason, want := range map[string]string{
		"stop": StopEndTurn, "length": StopMaxTokens, "content_filter": StopRefusal,
		"tool_calls": StopToolUse, "function_call": StopToolUse, "eos": StopEndTurn,
	} {
		t.Run(reason, func(t *testing.T) {
			_, p := setup(t, OpenAIConfig{}, llmtest.Reply{Text: []string{"x"}, FinishReason: reason})
			_, resp, err := collect(t, p, simpleRequest())
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
	want := &Response{Content: []message.Block{message.Text("ab"),
		{Type: message.TypeToolUse, ID: "c", Name: "f", Arguments: `{"k":"v"}`}},
		StopReason: StopToolUse, Usage: message.Usage{InputTokens: 5, OutputTokens: 2}}
	for name, mod := range variants {
		t.Run(name, func(t *testing.T) {
			r := base
			mod(&r)
			_, p := setup(t, OpenAIConfig{}, r)
			_, resp, err := collect(t, p, simpleRequest())
			if err != nil || !reflect.DeepEqual(resp, want) {
				t.Fatalf("got %#v, %v", resp, err)
			}
		})
	}
}

func TestOpenAIRejectStreamOptions(t *testing.T) {
	srv, p := setup(t, OpenAIConfig{},
		llmtest.Reply{Text: []string{"one"}, RejectStreamOptions: true, Usage: &llmtest.Usage{Prompt: 1, Completion: 1}},
		llmtest.Reply{Text: []string{"two"}, RejectStreamOptions: true})
	for i, want := range []string{"one", "two"} {
		_, resp, err := collect(t, p, simpleRequest())
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
	tests := []errCase{
		{"401", llmtest.Reply{Status: 401, ErrorBody: `{"error":{"message":"Incorrect API key provided: ` + testKey + `"}}`},
			"HTTP 401: ", false, 401, false, false},
		{"400", llmtest.Reply{Status: 400}, "HTTP 400: ", false, 400, false, false},
		{"429", llmtest.Reply{Status: 429, RetryAfter: "2"}, "HTTP 429: ", true, 429, false, false},
		{"503", llmtest.Reply{Status: 503}, "HTTP 503: ", true, 503, false, false},
		{"malformed", llmtest.Reply{Text: []string{"a"}, Malformed: true}, "malformed JSON in stream chunk 2", false, 0, false, false},
		{"cut before any text", llmtest.Reply{Text: []string{"a", "b"}, CutAfter: 1}, "stream cut", true, 0, true, false},
		{"cut after text", llmtest.Reply{Text: []string{"a", "b"}, CutAfter: 2}, "stream cut", true, 0, true, false},
		{"cut before DONE", llmtest.Reply{Text: []string{"a"}, CutAfter: 3}, "no [DONE] after 3 chunks", true, 0, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, p := setup(t, OpenAIConfig{APIKey: testKey}, tt.reply)
			_, _, err := collect(t, p, simpleRequest())
			checkErrorClass(t, err, tt, testKey)
		})
	}
}

func TestOpenAIRetryAfterParsed(t *testing.T) {
	_, p := setup(t, OpenAIConfig{}, llmtest.Reply{Status: 429, RetryAfter: "3"})
	_, _, err := collect(t, p, simpleRequest())
	var se *StatusError
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
			if err == nil || !strings.Contains(err.Error(), tt.contains) || Retryable(err) != tt.retryable {
				t.Fatalf("err = %v (retryable %v)", err, Retryable(err))
			}
		})
	}
}

func TestOpenAIEmptyScript(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	p := NewOpenAI(OpenAIConfig{BaseURL: srv.URL()})
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
	_, err := NewOpenAI(OpenAIConfig{BaseURL: ts.URL}).Stream(context.Background(), simpleRequest(), nil)
	if err == nil || !strings.Contains(err.Error(), "expected an event stream, got application/json") || Retryable(err) {
		t.Fatalf("err = %v", err)
	}
}

func TestBuildOARequestJSON(t *testing.T) {
	req := &Request{Model: "m", System: "sys",
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
		Tools: []ToolSpec{{Name: "f", Description: "does f", Parameters: json.RawMessage(`{"type":"object"}`)}, {Name: "g"}},
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

	noTools, _ := json.Marshal(buildOARequest(&Request{Model: "m"}, 10, true, false))
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
		p := WithRetry(NewOpenAI(OpenAIConfig{BaseURL: srv.URL()}), RetryPolicy{BaseDelay: time.Millisecond})
		_, err := p.Stream(context.Background(), &Request{Model: "m"}, nil)
		srv.Close()
		var se *StatusError
		if !errors.Is(err, ErrContextTooLong) || !errors.As(err, &se) || len(srv.Requests()) != 1 {
			t.Errorf("%s: err = %v after %d requests", body, err, len(srv.Requests()))
		}
	}
	srv := llmtest.New()
	defer srv.Close()
	srv.Enqueue(llmtest.Reply{Status: 400, ErrorBody: `{"error":{"message":"invalid tool schema"}}`})
	_, err := NewOpenAI(OpenAIConfig{BaseURL: srv.URL()}).Stream(context.Background(), &Request{Model: "m"}, nil)
	if errors.Is(err, ErrContextTooLong) {
		t.Errorf("an unrelated 400 is not context too long: %v", err)
	}
}
