package llmtest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/openheim/openheim/runtime/llm/sse"
)

// TestResponsesEventOrder: the events, their names (equal to the JSON's
// type), and the sequence numbers counting from 0, as the API sends them.
func TestResponsesEventOrder(t *testing.T) {
	r := Reply{Thinking: []string{"a", "b"}, Encrypted: "ENC", Text: []string{"x"},
		ToolCalls: []ToolCall{{ID: "call_1", Name: "f", Arguments: `{"k":"é"}`, Split: 2}},
		Usage:     &Usage{Prompt: 10, Completion: 5, Cached: 7, Reasoning: 3}}
	events, finishAt := r.responsesEvents(1, "gpt-5")
	var names []string
	for i, ev := range events {
		var v struct {
			Type string `json:"type"`
			Seq  *int   `json:"sequence_number"`
		}
		if err := json.Unmarshal([]byte(ev.data), &v); err != nil || v.Type != ev.name || v.Seq == nil || *v.Seq != i {
			t.Fatalf("event %d %s: %s (%v)", i, ev.name, ev.data, err)
		}
		names = append(names, strings.TrimPrefix(ev.name, "response."))
	}
	want := "created in_progress " +
		"output_item.added reasoning_summary_part.added reasoning_summary_text.delta reasoning_summary_text.delta " +
		"reasoning_summary_text.done reasoning_summary_part.done output_item.done " +
		"output_item.added content_part.added output_text.delta output_text.done content_part.done output_item.done " +
		"output_item.added function_call_arguments.delta function_call_arguments.delta function_call_arguments.done output_item.done " +
		"completed"
	if strings.Join(names, " ") != want || finishAt != len(events)-1 {
		t.Fatalf("events = %s (finishAt %d)", strings.Join(names, " "), finishAt)
	}
	last := events[len(events)-1].data
	for _, c := range []string{`"input_tokens":10`, `"cached_tokens":7`, `"output_tokens":5`, `"reasoning_tokens":3`, `"total_tokens":15`,
		`"encrypted_content":"ENC"`, `"call_id":"call_1"`, `"arguments":"{\"k\":\"é\"}"`} {
		if !strings.Contains(last, c) {
			t.Errorf("response.completed lacks %s: %s", c, last)
		}
	}
}

// TestResponsesServed: POST .../responses answers the real SSE format,
// `event:` then `data:`, ending with response.completed; errors and
// incomplete answers end the way the API ends them.
func TestResponsesServed(t *testing.T) {
	s := New()
	defer s.Close()
	s.Enqueue(Reply{Text: []string{"hi"}}, Reply{Text: []string{"a"}, ErrorEvent: "boom"}, Reply{Text: []string{"cut"}, FinishReason: "length"})
	for _, want := range []string{`"type":"response.completed"`, `"type":"response.failed"`, `"reason":"max_output_tokens"`} {
		resp, err := http.Post(s.URL()+"/responses", "application/json", strings.NewReader(`{"model":"gpt-5","stream":true,"input":[]}`))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.Header.Get("Content-Type") != "text/event-stream" || !strings.HasPrefix(string(body), "event: response.created\ndata: {") {
			t.Fatalf("%s: %.100s", resp.Header.Get("Content-Type"), body)
		}
		r := sse.NewReader(strings.NewReader(string(body)))
		var last sse.Event
		for {
			ev, err := r.Next()
			if err != nil {
				break
			}
			last = ev
		}
		if !strings.Contains(last.Data, want) {
			t.Errorf("last event %s: %s, want %s", last.Type, last.Data, want)
		}
	}
}
