package llmtest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/llm/sse"
)

// post sends a chat request and returns the status, headers and body.
func post(t *testing.T, s *Server, body string) (int, http.Header, string, error) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.URL()+"/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer k")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b), err
}

const withUsage = `{"model":"m","stream":true,"stream_options":{"include_usage":true}}`

func TestStreamFormat(t *testing.T) {
	tests := []struct {
		name        string
		reply       Reply
		body        string
		contains    []string
		notContains []string
	}{
		{"plain with usage", Reply{Text: []string{"Hi"}, Usage: &Usage{Prompt: 3, Completion: 1, Cached: 2}}, withUsage,
			[]string{`data: {"id":"chatcmpl-llmtest-1","object":"chat.completion.chunk","created":1764460800,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}` + "\n\n",
				`"delta":{"content":"Hi"}`, `"finish_reason":"stop"`,
				`"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4,"prompt_tokens_details":{"cached_tokens":2}}`},
			[]string{"\r", "keep-alive", `"error"`}},
		{"usage only when asked", Reply{Text: []string{"Hi"}, Usage: &Usage{Prompt: 3}}, `{"model":"m"}`, nil, []string{`"usage"`}},
		{"crlf", Reply{Text: []string{"a"}, CRLF: true}, withUsage, []string{"}\r\n\r\ndata: ", "data: [DONE]\r\n\r\n"}, nil},
		{"no space", Reply{Text: []string{"a"}, NoSpace: true}, withUsage, []string{"data:{", "data:[DONE]"}, []string{"data: "}},
		{"keep-alive", Reply{Text: []string{"a"}, KeepAlive: true}, withUsage, []string{"\n\n: keep-alive\n\ndata: "}, nil},
		{"error null", Reply{Text: []string{"a"}, ErrorNull: true}, withUsage, []string{`"error":null`}, nil},
		{"thinking and tools", Reply{Thinking: []string{"hm"}, ToolCalls: []ToolCall{{Name: "f", Arguments: `{"a":"é"}`, Split: 3}}}, withUsage,
			[]string{`"delta":{"reasoning_content":"hm"}`,
				`"tool_calls":[{"index":0,"type":"function","function":{"name":"f","arguments":"{\"a"}}]`,
				`"tool_calls":[{"index":0,"function":{"arguments":"\":\""}}]`, `"arguments":"é\"}"`, `"finish_reason":"tool_calls"`},
			[]string{`"id":"call`}},
		{"finish override", Reply{Text: []string{"a"}, FinishReason: "length"}, withUsage, []string{`"finish_reason":"length"`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New()
			defer s.Close()
			s.Enqueue(tt.reply)
			status, h, body, err := post(t, s, tt.body)
			if err != nil || status != 200 || h.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("%d %v %v", status, h, err)
			}
			if !strings.HasSuffix(body, "[DONE]\n\n") && !strings.HasSuffix(body, "[DONE]\r\n\r\n") {
				t.Errorf("no [DONE] at the end: %q", body)
			}
			for _, c := range tt.contains {
				if !strings.Contains(body, c) {
					t.Errorf("body lacks %q:\n%s", c, body)
				}
			}
			for _, c := range tt.notContains {
				if strings.Contains(body, c) {
					t.Errorf("body has %q:\n%s", c, body)
				}
			}
			// Whatever the variant, it must decode as SSE.
			r := sse.NewReader(strings.NewReader(body))
			var last string
			for {
				ev, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				last = ev.Data
			}
			if last != "[DONE]" {
				t.Errorf("last event %q", last)
			}
		})
	}
}

func TestErrorsAndRecording(t *testing.T) {
	s := New()
	defer s.Close()
	s.Enqueue(Reply{Status: 429, RetryAfter: "0"}, Reply{Status: 400, ErrorBody: "nope"})

	status, h, body, _ := post(t, s, `{"model":"a"}`)
	if status != 429 || h.Get("Retry-After") != "0" || !strings.Contains(body, "llmtest: scripted HTTP 429") {
		t.Errorf("429: %d %v %s", status, h, body)
	}
	if status, _, body, _ = post(t, s, `not json`); status != 400 || body != "nope" {
		t.Errorf("400: %d %s", status, body)
	}
	if status, _, body, _ = post(t, s, `{}`); status != 500 || strings.TrimSpace(body) != "llmtest: no scripted reply for request 3" {
		t.Errorf("empty queue: %d %q", status, body)
	}
	// GET /models is a health check's (models.go); any other GET is a 404.
	resp, err := http.Get(s.URL() + "/files")
	if err != nil || resp.StatusCode != 404 {
		t.Errorf("GET /files: %v %v", resp, err)
	}
	resp.Body.Close()

	reqs := s.Requests()
	if len(reqs) != 4 || reqs[0].Body["model"] != "a" || reqs[1].Body != nil || string(reqs[1].Raw) != "not json" ||
		reqs[0].Header.Get("Authorization") != "Bearer k" || reqs[3].Method != "GET" || reqs[0].Path != "/v1/chat/completions" {
		t.Fatalf("requests = %+v", reqs)
	}
}

func TestRejectStreamOptionsKeepsReply(t *testing.T) {
	s := New()
	defer s.Close()
	s.Enqueue(Reply{Text: []string{"a"}, RejectStreamOptions: true})
	status, _, body, _ := post(t, s, withUsage)
	if status != 400 || !strings.Contains(body, "stream_options") || s.Pending() != 1 {
		t.Fatalf("%d %s pending %d", status, body, s.Pending())
	}
	if status, _, _, _ = post(t, s, `{"model":"m"}`); status != 200 || s.Pending() != 0 {
		t.Fatalf("retry: %d pending %d", status, s.Pending())
	}
}

func TestCutAfterAbortsConnection(t *testing.T) {
	s := New()
	defer s.Close()
	s.Enqueue(Reply{Text: []string{"a", "b"}, CutAfter: 2})
	_, _, body, err := post(t, s, withUsage)
	if !errors.Is(err, io.ErrUnexpectedEOF) || strings.Count(body, "data: ") != 2 || strings.Contains(body, "[DONE]") {
		t.Fatalf("err %v body %q", err, body)
	}
}

func TestHangReleasedByClientAndClose(t *testing.T) {
	s := New()
	s.Enqueue(Reply{Text: []string{"a"}, Hang: true}, Reply{Hang: true}, Reply{DelayMs: 60000})

	// A client that goes away releases the handler.
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+"/chat/completions", strings.NewReader(withUsage))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	n, _ := resp.Body.Read(buf)
	if !strings.HasPrefix(string(buf[:n]), "data: {") {
		t.Fatalf("first chunk %q", buf[:n])
	}
	cancel()
	resp.Body.Close()

	// Close releases hanging and delayed handlers instead of waiting forever.
	for i := 0; i < 2; i++ {
		go func() {
			if r, err := http.Post(s.URL()+"/chat/completions", "application/json", strings.NewReader("{}")); err == nil {
				_, _ = io.Copy(io.Discard, r.Body)
				r.Body.Close()
			}
		}()
	}
	for len(s.Requests()) < 3 {
		time.Sleep(5 * time.Millisecond)
	}
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close blocked")
	}
}

func TestLoadScript(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	os.WriteFile(good, []byte(`[
	 {"thinking": ["hm"], "text": ["a", "b"], "usage": {"prompt": 1, "completion": 2, "cached": 0}},
	 {"tool_calls": [{"id": "c", "name": "f", "arguments": "{}", "split": 2}], "finish_reason": "tool_calls"},
	 {"status": 429, "retry_after": "0", "error_body": "slow"},
	 {"cut_after": 1, "malformed": true, "delay_ms": 1, "chunk_delay_ms": 1, "hang": true, "crlf": true,
	  "no_space": true, "keep_alive": true, "error_null": true, "reject_stream_options": true}]`), 0o644)
	rs, err := LoadScript(good)
	if err != nil {
		t.Fatal(err)
	}
	want := []Reply{
		{Thinking: []string{"hm"}, Text: []string{"a", "b"}, Usage: &Usage{Prompt: 1, Completion: 2}},
		{ToolCalls: []ToolCall{{ID: "c", Name: "f", Arguments: "{}", Split: 2}}, FinishReason: "tool_calls"},
		{Status: 429, RetryAfter: "0", ErrorBody: "slow"},
		{CutAfter: 1, Malformed: true, DelayMs: 1, ChunkDelayMs: 1, Hang: true, CRLF: true, NoSpace: true,
			KeepAlive: true, ErrorNull: true, RejectStreamOptions: true},
	}
	if !reflect.DeepEqual(rs, want) {
		t.Fatalf("got %+v", rs)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`[{"txt": ["a"]}]`), 0o644)
	if _, err := LoadScript(bad); err == nil || !strings.Contains(err.Error(), `unknown field "txt"`) {
		t.Fatalf("typo accepted: %v", err)
	}
	if _, err := LoadScript(filepath.Join(dir, "none.json")); err == nil {
		t.Fatal("missing file accepted")
	}
}

func TestSplitRunes(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want []string
	}{
		{"", 3, []string{""}},
		{"abc", 0, []string{"abc"}},
		{"abcdefg", 3, []string{"abc", "de", "fg"}},
		{"ab", 5, []string{"a", "b"}},
		{"é世🎉x", 4, []string{"é", "世", "🎉", "x"}},
	}
	for _, tt := range tests {
		if got := splitRunes(tt.s, tt.n); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("splitRunes(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}
