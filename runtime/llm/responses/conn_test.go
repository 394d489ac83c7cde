package responses

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/message"
)

func ev(typ, data string) string { return "event: " + typ + "\ndata: " + data + "\n\n" }

// rawStream: reasoning summary in two parts, text, a call whose arguments
// come whole in output_item.added (some servers), CRLF-free; completed.
var rawStream = ev("response.created", `{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","status":"in_progress","output":[]}}`) +
	ev("response.output_item.added", `{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}}`) +
	ev("response.reasoning_summary_text.delta", `{"type":"response.reasoning_summary_text.delta","sequence_number":2,"item_id":"rs_1","output_index":0,"summary_index":0,"delta":"One."}`) +
	ev("response.reasoning_summary_text.delta", `{"type":"response.reasoning_summary_text.delta","sequence_number":3,"item_id":"rs_1","output_index":0,"summary_index":1,"delta":"Twö."}`) +
	ev("response.output_item.done", `{"type":"response.output_item.done","sequence_number":4,"output_index":0,"item":{"id":"rs_1","type":"reasoning","encrypted_content":"ENC","summary":[{"type":"summary_text","text":"One."},{"type":"summary_text","text":"Twö."}]}}`) +
	ev("response.output_item.added", `{"type":"response.output_item.added","sequence_number":5,"output_index":1,"item":{"id":"msg_1","type":"message","role":"assistant","content":[]}}`) +
	ev("response.output_text.delta", `{"type":"response.output_text.delta","sequence_number":6,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"Hé 世"}`) +
	ev("response.output_item.added", `{"type":"response.output_item.added","sequence_number":7,"output_index":2,"item":{"id":"fc_1","type":"function_call","call_id":"call_1","name":"f","arguments":"{\"p\":\"🎉\"}"}}`) +
	ev("response.function_call_arguments.done", `{"type":"response.function_call_arguments.done","sequence_number":8,"item_id":"fc_1","output_index":2,"arguments":"{\"p\":\"🎉\"}"}`) +
	ev("response.completed", `{"type":"response.completed","sequence_number":9,"response":{"id":"resp_1","status":"completed","usage":{"input_tokens":10,"input_tokens_details":{"cached_tokens":4},"output_tokens":7,"output_tokens_details":{"reasoning_tokens":3},"total_tokens":17}}}`)

func rawWant() *llm.Response {
	enc := "ENC"
	return &llm.Response{Content: []message.Block{
		{Type: message.TypeThinking, Thinking: "One.\n\nTwö.", Signature: &enc, Origin: Origin},
		message.Text("Hé 世"),
		{Type: message.TypeToolUse, ID: "call_1", Name: "f", Arguments: `{"p":"🎉"}`}},
		StopReason: llm.StopToolUse, Usage: message.Usage{InputTokens: 6, OutputTokens: 7, CacheReadTokens: 4}}
}

func TestDecodeStreamSplitEverywhere(t *testing.T) {
	want := rawWant()
	for i := 0; i <= len(rawStream); i++ {
		r := io.MultiReader(strings.NewReader(rawStream[:i]), iotest.HalfReader(strings.NewReader(rawStream[i:])))
		got, err := decodeStream(r, 0, nil)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("split at %d: %#v, %v", i, got, err)
		}
	}
}

// TestDecodeStreamFailures: how a failed response is classified, from its
// error code, for the retry policy and the agent's context fitting.
func TestDecodeStreamFailures(t *testing.T) {
	failed := func(code, msg string) string {
		return ev("response.failed", `{"type":"response.failed","response":{"status":"failed","error":{"code":"`+code+`","message":"`+msg+`"}}}`)
	}
	tests := []struct {
		name, stream, contains string
		retryable, long        bool
		retryAfter             time.Duration
	}{
		{"rate limit", failed("rate_limit_exceeded", "Rate limit reached. Please try again in 1.5s."), "HTTP 429", true, false, 1500 * time.Millisecond},
		{"rate limit ms", failed("rate_limit_exceeded", "Please try again in 20ms."), "HTTP 429", true, false, 20 * time.Millisecond},
		{"overloaded", failed("server_is_overloaded", "busy"), "HTTP 503: busy", true, false, 0},
		{"context", failed("context_length_exceeded", "Your input exceeds the context window"), "context window", false, true, 0},
		{"quota is final", failed("insufficient_quota", "You exceeded your current quota"), "(insufficient_quota): You exceeded", false, false, 0},
		{"failed without error", ev("response.failed", `{"type":"response.failed","response":{"status":"failed"}}`), "without an error", false, false, 0},
		{"error event, top-level code", ev("error", `{"type":"error","code":"server_error","message":"oops","param":null}`), "HTTP 500: oops", true, false, 0},
		{"error event, nested", ev("error", `{"type":"error","error":{"type":"invalid_request_error","code":null,"message":"bad"}}`),
			"(invalid_request_error): bad", false, false, 0},
		{"error event without code", ev("error", `{"type":"error","message":"what"}`), "server error in stream: what", false, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeStream(strings.NewReader(tt.stream), 0, nil)
			if err == nil || !strings.Contains(err.Error(), tt.contains) || llm.Retryable(err) != tt.retryable ||
				errors.Is(err, llm.ErrContextTooLong) != tt.long {
				t.Fatalf("err = %v (retryable %v)", err, llm.Retryable(err))
			}
			var se *llm.StatusError
			if errors.As(err, &se) && se.RetryAfter != tt.retryAfter {
				t.Errorf("RetryAfter = %v", se.RetryAfter)
			}
		})
	}
}

// TestDecodeStreamDoneOnly: a server that sends only the done events (no
// deltas) still gives the whole answer, shown once.
func TestDecodeStreamDoneOnly(t *testing.T) {
	stream := ev("response.output_item.done", `{"type":"response.output_item.done","output_index":0,"item":{"id":"rs","type":"reasoning","summary":[{"type":"summary_text","text":"why"}]}}`) +
		ev("response.output_text.done", `{"type":"response.output_text.done","item_id":"m","output_index":1,"content_index":0,"text":"answer"}`) +
		ev("response.output_item.done", `{"type":"response.output_item.done","output_index":1,"item":{"id":"m","type":"message","content":[{"type":"output_text","text":"answer"}]}}`) +
		ev("response.completed", `{"type":"response.completed","response":{"status":"completed"}}`)
	var shown []llm.Delta
	resp, err := decodeStream(strings.NewReader(stream), 0, func(d llm.Delta) error { shown = append(shown, d); return nil })
	want := []message.Block{{Type: message.TypeThinking, Thinking: "why", Origin: Origin}, message.Text("answer")}
	if err != nil || !reflect.DeepEqual(resp.Content, want) {
		t.Fatalf("%#v, %v", resp, err)
	}
	if len(shown) != 2 || shown[0].Text != "why" || shown[1].Text != "answer" {
		t.Errorf("shown %#v", shown)
	}
}
