package event

import (
	"errors"
	"testing"
)

// TestCoalesce: runs of text chunks of one kind and session merge in order;
// anything else ends a run and passes as it is.
func TestCoalesce(t *testing.T) {
	think := Text("s", AgentThoughtChunk, "t1")
	summary := Text("s", AgentThoughtChunk, "sum")
	summary.Summary = true
	in := []Event{
		Text("s", AgentMessageChunk, "a"), Text("s", AgentMessageChunk, "b"), Text("s", AgentMessageChunk, "c"),
		Text("other", AgentMessageChunk, "x"),
		think, summary,
		{SessionID: "s", Kind: ToolCall, Tool: &ToolCallInfo{ID: "1"}},
		Text("s", AgentMessageChunk, "d"), Text("s", AgentMessageChunk, "e"),
	}
	first := in[0].Content
	out := Coalesce(in)
	want := []struct {
		kind Kind
		text string
	}{{AgentMessageChunk, "abc"}, {AgentMessageChunk, "x"}, {AgentThoughtChunk, "t1"}, {AgentThoughtChunk, "sum"},
		{ToolCall, ""}, {AgentMessageChunk, "de"}}
	if len(out) != len(want) {
		t.Fatalf("%d events, want %d", len(out), len(want))
	}
	for i, w := range want {
		got := ""
		if out[i].Content != nil {
			got = out[i].Content.Text
		}
		if out[i].Kind != w.kind || got != w.text {
			t.Errorf("event %d: %s %q, want %s %q", i, out[i].Kind, got, w.kind, w.text)
		}
	}
	if first.Text != "a" {
		t.Errorf("the first event's own content was changed to %q", first.Text)
	}
	if !out[3].Summary || out[2].Summary {
		t.Error("a summary merged with reasoning")
	}
	big := make([]Event, 3)
	for i := range big {
		big[i] = Text("s", AgentMessageChunk, string(make([]byte, MaxCoalesced/2)))
	}
	if got := Coalesce(big); len(got) != 2 || len(got[0].Content.Text) != MaxCoalesced {
		t.Errorf("merged past MaxCoalesced: %d chunks", len(got))
	}
	if got := Coalesce(nil); len(got) != 0 {
		t.Errorf("Coalesce(nil) = %v", got)
	}
}

// TestSharedEncode: each form is encoded once, whoever asks; a nil Shared
// encodes every time.
func TestSharedEncode(t *testing.T) {
	var s Shared
	calls := 0
	enc := func(b string) func() ([]byte, error) {
		return func() ([]byte, error) { calls++; return []byte(b), nil }
	}
	for range 3 {
		if b, _ := s.Encode("acp", enc("A")); string(b) != "A" {
			t.Fatalf("acp: %q", b)
		}
		if b, _ := s.Encode("inline", enc("I")); string(b) != "I" {
			t.Fatalf("inline: %q", b)
		}
	}
	if calls != 2 {
		t.Errorf("%d encodings, want 2", calls)
	}
	boom := errors.New("boom")
	if _, err := s.Encode("bad", func() ([]byte, error) { return nil, boom }); err != boom {
		t.Errorf("error %v", err)
	}
	var none *Shared
	none.Encode("acp", enc("A"))
	none.Encode("acp", enc("A"))
	if calls != 4 {
		t.Errorf("nil Shared: %d encodings, want 4", calls)
	}
}
