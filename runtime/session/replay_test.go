package session

import (
	"encoding/json"
	"testing"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/message"
)

func everyBlock() *Conversation {
	img := message.Block{Type: message.TypeImage, Data: "iVBO", MimeType: "image/png"}
	return &Conversation{Meta: Meta{ID: lockID}, Messages: []message.Message{
		{Role: message.RoleSystem, Content: []message.Block{message.Text("you are")}},
		{Role: message.RoleUser, Content: []message.Block{message.Text("look"), img}},
		{Role: message.RoleAssistant, Content: []message.Block{
			{Type: message.TypeThinking, Thinking: "hmm"},
			{Type: message.TypeRedactedThinking, Data: "xx"},
			message.Text("sure"),
			{Type: message.TypeToolUse, ID: "c1", Name: "read_file", Arguments: `{ "path": "a" }`},
			{Type: message.TypeToolUse, ID: "c2", Name: "bash", Arguments: ""},
			{Type: message.TypeToolUse, ID: "c3", Name: "odd", Arguments: `[1,2]`},
			{Type: message.TypeToolUse, ID: "c4", Name: "odd", Arguments: `{"broken"`},
		}},
		{Role: message.RoleTool, Content: []message.Block{
			message.ToolResult("c1", "read_file", "line \"1\"", false),
			message.ToolResult("c2", "bash", "boom", true),
		}},
	}}
}

func TestReplay(t *testing.T) {
	kinds := map[string]string{"read_file": "read", "bash": "execute"}
	type want struct {
		kind    event.Kind
		content string // text of Content, or mime type for an image
		id      string
		status  string
		tkind   string
		raw     string // RawInput or RawOutput
	}
	wants := []want{
		{kind: event.UserMessageChunk, content: "look"},
		{kind: event.UserMessageChunk, content: "image/png"},
		{kind: event.AgentThoughtChunk, content: "hmm"},
		// redacted_thinking shows the notice, never its data.
		{kind: event.AgentThoughtChunk, content: message.RedactedThinkingNotice},
		{kind: event.AgentMessageChunk, content: "sure"},
		{kind: event.ToolCall, id: "c1", status: event.StatusInProgress, tkind: "read", raw: `{"path":"a"}`},
		{kind: event.ToolCall, id: "c2", status: event.StatusInProgress, tkind: "execute", raw: `{}`},
		{kind: event.ToolCall, id: "c3", status: event.StatusInProgress, tkind: "other", raw: `"[1,2]"`},
		{kind: event.ToolCall, id: "c4", status: event.StatusInProgress, tkind: "other", raw: `"{\"broken\""`},
		{kind: event.ToolCallUpdate, id: "c1", status: event.StatusCompleted, raw: `"line \"1\""`},
		{kind: event.ToolCallUpdate, id: "c2", status: event.StatusFailed, raw: `"boom"`},
	}
	got := Replay(everyBlock(), func(n string) string { return kinds[n] })
	if len(got) != len(wants) {
		t.Fatalf("%d events, want %d: %+v", len(got), len(wants), got)
	}
	for i, w := range wants {
		e := got[i]
		if e.SessionID != lockID || e.Kind != w.kind {
			t.Errorf("%d: %s %s", i, e.SessionID, e.Kind)
			continue
		}
		if w.content != "" {
			if e.Content == nil || (e.Content.Text != w.content && e.Content.MimeType != w.content) {
				t.Errorf("%d: content %+v, want %s", i, e.Content, w.content)
			}
			continue
		}
		raw := e.Tool.RawInput
		if w.kind == event.ToolCallUpdate {
			raw = e.Tool.RawOutput
		}
		if e.Tool.ID != w.id || e.Tool.Status != w.status || e.Tool.Kind != w.tkind || string(raw) != w.raw || !json.Valid(raw) {
			t.Errorf("%d: tool %+v raw %s, want %+v", i, e.Tool, raw, w)
		}
		if w.kind == event.ToolCall && e.Tool.Title == "" {
			t.Errorf("%d: no title", i)
		}
	}
	for _, e := range Replay(everyBlock(), nil) {
		if e.Kind == event.ToolCall && e.Tool.Kind != "other" {
			t.Errorf("nil kindOf gave %q", e.Tool.Kind)
		}
	}
}

func TestSearchText(t *testing.T) {
	conv := everyBlock()
	cases := []struct {
		msg  message.Message
		want string
	}{
		{conv.Messages[1], "look"},
		{conv.Messages[2], "hmm\nsure\nread_file\n{ \"path\": \"a\" }\nbash\nodd\n[1,2]\nodd\n{\"broken\""},
		{conv.Messages[3], "line \"1\"\nboom"},
		{message.Message{Role: message.RoleUser}, ""},
	}
	for i, tc := range cases {
		if got := SearchText(tc.msg); got != tc.want {
			t.Errorf("%d: %q, want %q", i, got, tc.want)
		}
	}
}
