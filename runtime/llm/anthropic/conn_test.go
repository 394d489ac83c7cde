package anthropic

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/llm/internal/wiretest"
	"github.com/openheim/openheim/runtime/llm/llmtest"
	"github.com/openheim/openheim/runtime/llm/retry"
	"github.com/openheim/openheim/runtime/message"
)

// rawAnStream is what the API sends for redacted + signed thinking, text and
// two tool calls (the second without input fragments), CRLF line ends.
const rawAnStream = "event: message_start\r\n" +
	`data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"cache_creation_input_tokens":3,"cache_read_input_tokens":40,"output_tokens":1}}}` + "\r\n\r\n" +
	"event: ping\r\ndata: {\"type\": \"ping\"}\r\n\r\n" +
	"event: content_block_start\r\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"RED=="}}` + "\r\n\r\n" +
	"event: content_block_stop\r\n" + `data: {"type":"content_block_stop","index":0}` + "\r\n\r\n" +
	"event: content_block_start\r\n" + `data: {"type":"content_block_start","index":1,"content_block":{"type":"thinking","thinking":"","signature":""}}` + "\r\n\r\n" +
	"event: content_block_delta\r\n" + `data: {"type":"content_block_delta","index":1,"delta":{"type":"thinking_delta","thinking":"hmm, "}}` + "\r\n\r\n" +
	"event: content_block_delta\r\n" + `data: {"type":"content_block_delta","index":1,"delta":{"type":"thinking_delta","thinking":"ünïcode"}}` + "\r\n\r\n" +
	"event: content_block_delta\r\n" + `data: {"type":"content_block_delta","index":1,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM"}}` + "\r\n\r\n" +
	"event: content_block_stop\r\n" + `data: {"type":"content_block_stop","index":1}` + "\r\n\r\n" +
	"event: content_block_start\r\n" + `data: {"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}` + "\r\n\r\n" +
	"event: content_block_delta\r\n" + `data: {"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":"Hé 世"}}` + "\r\n\r\n" +
	"event: content_block_stop\r\n" + `data: {"type":"content_block_stop","index":2}` + "\r\n\r\n" +
	"event: content_block_start\r\n" + `data: {"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"toolu_1","name":"f","input":{}}}` + "\r\n\r\n" +
	"event: content_block_delta\r\n" + `data: {"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":""}}` + "\r\n\r\n" +
	"event: content_block_delta\r\n" + `data: {"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"{\"p\": \"世"}}` + "\r\n\r\n" +
	"event: content_block_delta\r\n" + `data: {"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"🎉\"}"}}` + "\r\n\r\n" +
	"event: content_block_stop\r\n" + `data: {"type":"content_block_stop","index":3}` + "\r\n\r\n" +
	"event: content_block_start\r\n" + `data: {"type":"content_block_start","index":4,"content_block":{"type":"tool_use","id":"toolu_2","name":"g","input":{}}}` + "\r\n\r\n" +
	"event: content_block_stop\r\n" + `data: {"type":"content_block_stop","index":4}` + "\r\n\r\n" +
	"event: message_delta\r\n" + `data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":42}}` + "\r\n\r\n" +
	"event: message_stop\r\n" + `data: {"type":"message_stop"}` + "\r\n\r\n"

var rawAnWant = &llm.Response{
	Content: []message.Block{{Type: message.TypeRedactedThinking, Data: "RED=="},
		{Type: message.TypeThinking, Thinking: "hmm, ünïcode", Signature: strp("EqQBCgIYAhIM")},
		message.Text("Hé 世"),
		{Type: message.TypeToolUse, ID: "toolu_1", Name: "f", Arguments: `{"p": "世🎉"}`},
		{Type: message.TypeToolUse, ID: "toolu_2", Name: "g", Arguments: `{}`}},
	StopReason: llm.StopToolUse,
	Usage:      message.Usage{InputTokens: 12, OutputTokens: 42, CacheCreationTokens: 3, CacheReadTokens: 40},
}

func TestDecodeAnStreamSplitEverywhere(t *testing.T) {
	// One byte per Read from the start, then every split point: each UTF-8
	// character and each CRLF is cut between reads somewhere.
	got, err := decodeAnStream(iotest.OneByteReader(strings.NewReader(rawAnStream)), 0, nil)
	if err != nil || !reflect.DeepEqual(got, rawAnWant) {
		t.Fatalf("one byte per read: %#v, %v", got, err)
	}
	for i := 0; i <= len(rawAnStream); i++ {
		r := io.MultiReader(strings.NewReader(rawAnStream[:i]), iotest.HalfReader(strings.NewReader(rawAnStream[i:])))
		got, err := decodeAnStream(r, 0, nil)
		if err != nil || !reflect.DeepEqual(got, rawAnWant) {
			t.Fatalf("split at %d: %#v, %v", i, got, err)
		}
	}
}

func TestAnthropicByteByByteOverHTTP(t *testing.T) {
	// The whole client path with a server that flushes one byte at a time.
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		for i := 0; i < len(rawAnStream); i++ {
			if _, err := w.Write([]byte{rawAnStream[i]}); err != nil {
				return
			}
			f.Flush()
		}
	}))
	defer ts.Close()
	var ds []llm.Delta
	got, err := New(Config{BaseURL: ts.URL, Timeout: 5 * time.Second}).Stream(context.Background(),
		anRequestFor(userMsg("hi")), func(d llm.Delta) error { ds = append(ds, d); return nil })
	if err != nil || !reflect.DeepEqual(got, rawAnWant) {
		t.Fatalf("%#v, %v", got, err)
	}
	want := []llm.Delta{{Kind: llm.DeltaThinking, Text: message.RedactedThinkingNotice},
		{Kind: llm.DeltaThinking, Text: "hmm, "}, {Kind: llm.DeltaThinking, Text: "ünïcode"}, {Kind: llm.DeltaText, Text: "Hé 世"},
		llm.ToolCallDelta(0, "toolu_1", "f"), llm.ToolCallDelta(1, "toolu_2", "g")}
	if !reflect.DeepEqual(ds, want) {
		t.Errorf("deltas = %#v", ds)
	}
}

func TestDecodeAnStreamEdgeCases(t *testing.T) {
	ev := func(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }
	stop := ev("message_stop", `{"type":"message_stop"}`)
	tests := []struct {
		name, stream, wantErr string
		retryable             bool
		check                 func(*llm.Response) bool
	}{
		{"api_error is final", ev("error", `{"type":"error","error":{"type":"api_error","message":"Internal"}}`),
			"server error in stream (api_error): Internal", false, nil},
		{"no event names", `data: {"type":"message_start","message":{"usage":{"input_tokens":5}}}` + "\n\n" +
			`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"implicit"}}` + "\n\n" +
			`data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"input_tokens":6,"output_tokens":2}}` + "\n\n" +
			`data: {"type":"message_stop"}` + "\n\n", "", false,
			func(r *llm.Response) bool {
				return reflect.DeepEqual(r.Content, []message.Block{message.Text("implicit")}) &&
					r.Usage == message.Usage{InputTokens: 6, OutputTokens: 2}
			}},
		{"unknown events and blocks ignored", ev("new_event", `{"type":"new_event"}`) +
			ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"s","name":"web"}}`) +
			ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{}"}}`) +
			ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{}}}`) +
			ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"pause_turn"},"usage":{"output_tokens":1}}`) + stop, "", false,
			func(r *llm.Response) bool { return len(r.Content) == 0 && r.StopReason == llm.StopPauseTurn }},
		{"whole input in start", ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"f","input":{"a":[1]}}}`) + stop, "", false,
			func(r *llm.Response) bool {
				return r.Content[0].Arguments == `{"a":[1]}` && r.StopReason == llm.StopToolUse
			}},
		{"signature only", ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":"S"}}`) + stop, "", false,
			func(r *llm.Response) bool {
				return len(r.Content) == 1 && *r.Content[0].Signature == "S" && r.Content[0].Thinking == ""
			}},
		{"ends after message_delta", ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"all"}}`) +
			ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"}}`) + "event: message_stop\ndata: {\"type\":\"message_s", "", false,
			func(r *llm.Response) bool {
				return reflect.DeepEqual(r.Content, []message.Block{message.Text("all")}) && r.StopReason == event.StopEndTurn
			}},
		{"ends before message_delta", ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"half"}}`),
			"no message_stop after 1 events", true, nil},
		{"cut mid-line", "event: message_start\ndata: {\"type\":\"mess", "stream cut", true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := decodeAnStream(strings.NewReader(tt.stream), 0, nil)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || llm.Retryable(err) != tt.retryable {
					t.Fatalf("err = %v (retryable %v)", err, llm.Retryable(err))
				}
				return
			}
			if err != nil || !tt.check(resp) {
				t.Fatalf("%#v, %v", resp, err)
			}
		})
	}
}

func TestAnthropicWithRetry(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	var waits []time.Duration
	pol := retry.Policy{BaseDelay: time.Millisecond, MaxDelay: 20 * time.Millisecond, Logger: quiet,
		Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }}
	ok := llmtest.Reply{Text: []string{"fine"}}
	tests := []struct {
		name     string
		first    llmtest.Reply
		wantErr  bool
		requests int
	}{
		// message_start, ping, content_block_start, then the cut: nothing forwarded.
		{"cut before text", llmtest.Reply{Text: []string{"a", "b"}, CutAfter: 3}, false, 2},
		// "a" was forwarded: a second attempt would stream after it.
		{"cut after text", llmtest.Reply{Text: []string{"a", "b"}, CutAfter: 4}, true, 1},
		{"429 with Retry-After", llmtest.Reply{Status: 429, RetryAfter: "1"}, false, 2},
		{"overloaded before text", llmtest.Reply{ErrorEvent: "Overloaded"}, false, 2},
		{"overloaded after text", llmtest.Reply{Text: []string{"a"}, ErrorEvent: "Overloaded"}, true, 1},
		{"prompt too long", llmtest.Reply{Status: 400, ErrorBody: `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 250000 tokens > 200000 maximum"}}`}, true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, p := setupAn(t, Config{}, tt.first, ok)
			waits = nil
			_, resp, err := wiretest.Collect(t, retry.Wrap(p, pol), anRequestFor(userMsg("hi")))
			if (err != nil) != tt.wantErr || len(srv.Requests()) != tt.requests {
				t.Fatalf("err = %v after %d requests", err, len(srv.Requests()))
			}
			if !tt.wantErr && (len(resp.Content) != 1 || resp.Content[0].Text != "fine") {
				t.Errorf("response = %#v", resp)
			}
			if tt.first.RetryAfter == "1" && (len(waits) != 1 || waits[0] != time.Second) {
				t.Errorf("waits = %v, want the server's Retry-After of 1s", waits)
			}
		})
	}
	_, p := setupAn(t, Config{}, llmtest.Reply{Status: 429, RetryAfter: "3"})
	_, _, err := wiretest.Collect(t, p, anRequestFor(userMsg("hi")))
	var se *llm.StatusError
	if !errors.As(err, &se) || se.RetryAfter != 3*time.Second {
		t.Fatalf("err = %#v", err)
	}
}

func TestAnthropicIdleTimeoutAndAbort(t *testing.T) {
	_, p := setupAn(t, Config{APIKey: testKey, Timeout: 200 * time.Millisecond},
		llmtest.Reply{Text: []string{"a"}, Hang: true})
	_, _, err := wiretest.Collect(t, p, anRequestFor(userMsg("hi")))
	if err == nil || !strings.Contains(err.Error(), "no data from the server for 200ms (stream idle)") || !llm.Retryable(err) {
		t.Fatalf("err = %v", err)
	}

	_, p = setupAn(t, Config{}, llmtest.Reply{Text: []string{"a", "b", "c"}})
	stop := errors.New("consumer gone")
	n := 0
	_, err = p.Stream(context.Background(), anRequestFor(userMsg("hi")), func(llm.Delta) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Fatalf("err = %v after %d deltas", err, n)
	}
}

func TestAnthropicKeyNeverInErrors(t *testing.T) {
	echo := `{"type":"error","error":{"type":"authentication_error","message":"key ` + testKey + ` is invalid"}}`
	replies := []llmtest.Reply{
		{Status: 401, ErrorBody: echo},
		{Status: 400, ErrorBody: `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long (key ` + testKey + `)"}}`},
		{Status: 429, ErrorBody: echo, RetryAfter: "1"},
		{Status: 500, ErrorBody: strings.Repeat("x", 3000) + testKey},
		{Text: []string{"a"}, Malformed: true},
		{Text: []string{"a"}, ErrorEvent: "overloaded for " + testKey},
		{Text: []string{"a"}, CutAfter: 1},
		{Text: []string{"a"}, Hang: true},
	}
	for i, r := range replies {
		_, p := setupAn(t, Config{APIKey: testKey, Timeout: 200 * time.Millisecond}, r)
		_, _, err := wiretest.Collect(t, p, anRequestFor(userMsg("hi")))
		if err == nil {
			t.Fatalf("reply %d: no error", i)
		}
		if strings.Contains(err.Error(), testKey) || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("reply %d: key in error: %v", i, err)
		}
		if i == 1 && !errors.Is(err, llm.ErrContextTooLong) {
			t.Errorf("redaction lost ErrContextTooLong: %v", err)
		}
	}
}
