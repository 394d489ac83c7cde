package llmtest

import (
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/openheim/openheim/runtime/llm/sse"
)

func TestAnthropicEventOrder(t *testing.T) {
	r := Reply{RedactedThinking: []string{"R"}, Thinking: []string{"a", "b"}, Signature: "S", Text: []string{"x"},
		ToolCalls: []ToolCall{{ID: "t1", Name: "f", Arguments: `{"k":"é"}`, Split: 3}},
		Usage:     &Usage{Prompt: 10, Completion: 5, Cached: 7, CacheCreation: 2}}
	events, finishAt := r.anthropicEvents("msg_1", "claude")
	var names []string
	for _, ev := range events {
		var v map[string]any
		if err := json.Unmarshal([]byte(ev.data), &v); err != nil || v["type"] != ev.name {
			t.Fatalf("event %s: %s (%v)", ev.name, ev.data, err)
		}
		names = append(names, ev.name)
	}
	want := "message_start ping " +
		"content_block_start content_block_stop " + // redacted
		"content_block_start content_block_delta content_block_delta content_block_delta content_block_stop " + // thinking + signature
		"content_block_start content_block_delta content_block_stop " + // text
		"content_block_start content_block_delta content_block_delta content_block_delta content_block_stop " + // tool
		"message_delta"
	if strings.Join(names, " ") != want || finishAt != len(events)-1 {
		t.Fatalf("events = %s (finishAt %d)", strings.Join(names, " "), finishAt)
	}
	for _, c := range []string{`"input_tokens":10`, `"cache_read_input_tokens":7`, `"cache_creation_input_tokens":2`} {
		if !strings.Contains(events[0].data, c) {
			t.Errorf("message_start lacks %s: %s", c, events[0].data)
		}
	}
	if !strings.Contains(events[4].data, `"index":1`) || !strings.Contains(events[7].data, `"signature_delta"`) {
		t.Errorf("thinking block: %v", events[4:9])
	}
	if !strings.Contains(events[finishAt].data, `"stop_reason":"tool_use"`) || !strings.Contains(events[finishAt].data, `"output_tokens":5`) {
		t.Errorf("message_delta = %s", events[finishAt].data)
	}
}

func TestAnthropicErrorEventAndMalformed(t *testing.T) {
	events, finishAt := Reply{Text: []string{"x"}, ErrorEvent: "busy", Malformed: true}.anthropicEvents("m", "c")
	last := events[len(events)-1]
	if finishAt != len(events) || last.name != "error" ||
		last.data != `{"error":{"message":"busy","type":"overloaded_error"},"type":"error"}` {
		t.Fatalf("last = %+v, finishAt %d of %d", last, finishAt, len(events))
	}
	if events[1].name != "content_block_delta" || json.Valid([]byte(events[1].data)) {
		t.Fatalf("malformed event = %+v", events[1])
	}
}

func TestAnthropicStopMapping(t *testing.T) {
	for in, want := range map[string]string{"": "end_turn", "stop": "end_turn", "length": "max_tokens",
		"tool_calls": "tool_use", "content_filter": "refusal", "pause_turn": "pause_turn"} {
		events, at := Reply{FinishReason: in}.anthropicEvents("m", "c")
		if !strings.Contains(events[at].data, `"stop_reason":"`+want+`"`) {
			t.Errorf("%q: %s", in, events[at].data)
		}
	}
}

func TestAnthropicServedWithEndMarker(t *testing.T) {
	s := New()
	defer s.Close()
	s.Enqueue(Reply{Text: []string{"hi"}})
	resp, err := http.Post(s.URL()+"/messages", "application/json", strings.NewReader(`{"model":"claude"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	rd := sse.NewReader(strings.NewReader(string(body)))
	var names []string
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, ev.Type)
	}
	want := []string{"message_start", "ping", "content_block_start", "content_block_delta", "content_block_stop",
		"message_delta", "message_stop"}
	if !reflect.DeepEqual(names, want) || !strings.Contains(string(body), `"model":"claude"`) {
		t.Fatalf("events %v\n%s", names, body)
	}
}
