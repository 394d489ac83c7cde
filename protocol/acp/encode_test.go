package acp

import (
	"encoding/json"
	"testing"
)

func TestEncodeNotificationMatchesEncodingJSON(t *testing.T) {
	texts := []string{"", "plain", "quote \" backslash \\ slash /", "line\nfeed\r\ttab\b\f",
		"\x00\x01\x1f\x7f", "<script>&amp;</script>", "héllo wörld ✓ 🎉", "bad \xff\xfe utf8 \xc3",
		"sep \u2028 \u2029 end", string([]byte{0xe2, 0x80}), "\U0010FFFF"}
	for _, text := range texts {
		for _, kind := range []string{"agent_message_chunk", "agent_thought_chunk", "user_message_chunk"} {
			n := SessionNotification{SessionID: "s-1", Update: SessionUpdate{SessionUpdate: kind, Content: &ContentBlock{Type: "text", Text: text}}}
			want, err := json.Marshal(n)
			if err != nil {
				t.Fatal(err)
			}
			got, err := EncodeNotification(n)
			if err != nil || string(got) != string(want) {
				t.Errorf("%q:\n got %s\nwant %s", text, got, want)
			}
		}
	}
	// Anything else takes the general path, with the same result.
	title := "t"
	other := SessionNotification{SessionID: "s", Update: SessionUpdate{SessionUpdate: "tool_call", ToolCallID: "c", Title: &title}}
	got, _ := EncodeNotification(other)
	want, _ := json.Marshal(other)
	if string(got) != string(want) {
		t.Errorf("tool_call: %s != %s", got, want)
	}
}

// TestEncodeInlineMatchesGeneralPath: the direct inline chunk equals the
// general inline encoding, and thinking is marked as seed 000 shows.
func TestEncodeInlineMatchesGeneralPath(t *testing.T) {
	for _, text := range []string{"", "Let me think <about> this\n", "bad \xff"} {
		for _, kind := range []string{"agent_message_chunk", "agent_thought_chunk", "user_message_chunk"} {
			n := SessionNotification{SessionID: "s-1", Update: SessionUpdate{SessionUpdate: kind, Content: &ContentBlock{Type: "text", Text: text}}}
			got, err := EncodeInline(n)
			if err != nil {
				t.Fatal(err)
			}
			u := n.Update
			if kind == "agent_thought_chunk" {
				c := *u.Content
				c.Meta = map[string]any{"kind": "thinking"}
				u.SessionUpdate, u.Content = "agent_message_chunk", &c
			}
			want, _ := spliceSessionID(n.SessionID, u)
			if string(got) != string(want) {
				t.Errorf("%s %q:\n got %s\nwant %s", kind, text, got, want)
			}
			var m map[string]any
			if err := json.Unmarshal(got, &m); err != nil || m["sessionId"] != "s-1" || m["update"] != nil {
				t.Errorf("not the inline form: %s", got)
			}
		}
	}
	title := "t"
	got, _ := EncodeInline(SessionNotification{SessionID: "s", Update: SessionUpdate{SessionUpdate: "tool_call", ToolCallID: "c", Title: &title, Status: "pending"}})
	if string(got) != `{"sessionId":"s","sessionUpdate":"tool_call","toolCallId":"c","title":"t","status":"pending"}` {
		t.Errorf("tool_call inline: %s", got)
	}
}

func FuzzAppendJSONString(f *testing.F) {
	f.Add("hello <&> \u2028 \xff")
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendJSONString(nil, s); string(got) != string(want) {
			t.Fatalf("%q: got %s want %s", s, got, want)
		}
	})
}

func BenchmarkEncodeNotification(b *testing.B) {
	n := SessionNotification{SessionID: "550e8400-e29b-41d4-a716-446655440000",
		Update: SessionUpdate{SessionUpdate: "agent_message_chunk", Content: &ContentBlock{Type: "text", Text: "Here is the project structure:\n\n"}}}
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			EncodeNotification(n)
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		for b.Loop() {
			json.Marshal(n)
		}
	})
}
