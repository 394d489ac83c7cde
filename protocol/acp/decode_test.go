package acp

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/message"
)

// Updates as claude-agent-acp 0.23 and codex-acp 0.16 send them (recorded
// on this machine, paths shortened): each must decode whole and encode
// back to the same JSON.
var realUpdates = []string{
	// Claude: every tool_call has "content": [] and "locations": [].
	`{"_meta":{"claudeCode":{"toolName":"Write"}},"toolCallId":"toolu_w","sessionUpdate":"tool_call","rawInput":{},"status":"pending","title":"Write","kind":"edit","content":[],"locations":[]}`,
	// ... and the real input, a diff and a location only in a later update.
	`{"_meta":{"claudeCode":{"toolName":"Write"}},"toolCallId":"toolu_w","sessionUpdate":"tool_call_update","rawInput":{"file_path":"/w/b.txt","content":"new"},"title":"Write b.txt","kind":"edit","content":[{"type":"diff","path":"/w/b.txt","oldText":null,"newText":"new"}],"locations":[{"path":"/w/b.txt"}]}`,
	`{"_meta":{"claudeCode":{"toolName":"Edit"}},"toolCallId":"toolu_e","sessionUpdate":"tool_call_update","rawInput":{"file_path":"/w/a.txt","old_string":"old","new_string":"new"},"title":"Edit a.txt","kind":"edit","content":[{"type":"diff","path":"/w/a.txt","oldText":"old","newText":"new"}],"locations":[{"path":"/w/a.txt","line":1}]}`,
	`{"_meta":{"claudeCode":{"toolName":"Edit"}},"toolCallId":"toolu_e","sessionUpdate":"tool_call_update","status":"failed","rawOutput":"<tool_use_error>File has not been read yet.</tool_use_error>","content":[{"type":"content","content":{"type":"text","text":"File has not been read yet."}}]}`,
	`{"sessionUpdate":"usage_update","used":1,"size":200000,"cost":{"amount":0.25,"currency":"USD"}}`,
	// Codex: a failed command's content, and no rawOutput.
	`{"sessionUpdate":"tool_call_update","toolCallId":"call_1","status":"failed","content":[{"type":"content","content":{"type":"text","text":"bubblewrap is unavailable"}}]}`,
	// A terminal (agents that run commands through the client's terminals).
	`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"make","kind":"execute","status":"in_progress","content":[{"type":"terminal","terminalId":"term-1"}]}`,
}

func TestDecodeRealUpdates(t *testing.T) {
	for _, in := range realUpdates {
		u, err := DecodeUpdate([]byte(in))
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		out, err := json.Marshal(u)
		if err != nil {
			t.Fatal(err)
		}
		if canonJSON(t, string(out)) != canonJSON(t, in) {
			t.Errorf("round trip:\n got %s\nwant %s", out, in)
		}
	}
	u, _ := DecodeUpdate([]byte(realUpdates[0]))
	if u.ToolContent == nil || len(u.ToolContent) != 0 || u.Locations == nil {
		t.Errorf(`"content": [] must decode to an empty, non-nil list: %#v %#v`, u.ToolContent, u.Locations)
	}
	u, _ = DecodeUpdate([]byte(realUpdates[2]))
	d := u.ToolContent[0]
	if d.Type != "diff" || d.Path != "/w/a.txt" || d.OldText == nil || *d.OldText != "old" || d.NewText != "new" ||
		len(u.Locations) != 1 || u.Locations[0].Line == nil || *u.Locations[0].Line != 1 {
		t.Errorf("edit update: %+v", u)
	}
}

// TestDecodeLenient: an odd field, or an odd item of a list, costs only
// itself, and is reported.
func TestDecodeLenient(t *testing.T) {
	cases := []struct {
		name, in string
		fields   []string // reported
		check    func(SessionUpdate) bool
	}{
		{"status of the wrong type", `{"sessionUpdate":"tool_call_update","toolCallId":"c","status":5,"rawOutput":"ok"}`,
			[]string{"status"}, func(u SessionUpdate) bool {
				return u.ToolCallID == "c" && string(u.RawOutput) == `"ok"` && u.Status == ""
			}},
		{"an unknown content type", `{"sessionUpdate":"tool_call","toolCallId":"c","title":"t","content":[{"type":"hologram"},{"type":"diff","path":"/a","newText":"x"}]}`,
			[]string{"content[0]"}, func(u SessionUpdate) bool { return len(u.ToolContent) == 1 && u.ToolContent[0].Path == "/a" }},
		{"one content item instead of a list", `{"sessionUpdate":"tool_call","toolCallId":"c","content":{"type":"content","content":{"type":"text","text":"hi"}}}`,
			nil, func(u SessionUpdate) bool { return len(u.ToolContent) == 1 && u.ToolContent[0].Content.Text == "hi" }},
		{"a list of blocks in a chunk", `{"sessionUpdate":"agent_message_chunk","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`,
			nil, func(u SessionUpdate) bool { return u.Content != nil && u.Content.Text == "ab" }},
		{"a bad location", `{"sessionUpdate":"tool_call","toolCallId":"c","locations":[{"path":"/a","line":"x"},{"path":"/b","line":2}]}`,
			[]string{"locations[0]"}, func(u SessionUpdate) bool {
				return len(u.Locations) == 2 && u.Locations[0].Path == "/a" && u.Locations[1].Path == "/b"
			}},
		{"a cost that is a string", `{"sessionUpdate":"usage_update","used":5,"size":9,"cost":"cheap"}`,
			[]string{"cost"}, func(u SessionUpdate) bool { return *u.Used == 5 && u.Cost == nil }},
		{"a diff without its text", `{"sessionUpdate":"tool_call","toolCallId":"c","content":[{"type":"diff","path":"/a","newText":7}]}`,
			[]string{"content[0]"}, func(u SessionUpdate) bool { return len(u.ToolContent) == 1 && u.ToolContent[0].Path == "/a" }},
	}
	for _, c := range cases {
		u, err := DecodeUpdate([]byte(c.in))
		var got []string
		if err != nil {
			de, ok := err.(*DecodeError)
			if !ok {
				t.Errorf("%s: the update failed as a whole: %v", c.name, err)
				continue
			}
			for _, f := range de.Fields {
				got = append(got, f.Field)
			}
		}
		if !reflect.DeepEqual(got, c.fields) {
			t.Errorf("%s: reported %v, want %v (%v)", c.name, got, c.fields, err)
		}
		if !c.check(u) {
			t.Errorf("%s: decoded %+v", c.name, u)
		}
		// json.Unmarshal is as lenient, silently.
		var again SessionUpdate
		if err := json.Unmarshal([]byte(c.in), &again); err != nil || !reflect.DeepEqual(again, u) {
			t.Errorf("%s: Unmarshal gave %+v, %v", c.name, again, err)
		}
	}
	if _, err := DecodeUpdate([]byte(`[1,2]`)); err == nil || Partial(err) {
		t.Errorf("a list is not an update: %v", err)
	}
}

// TestToolCallRoundTrip: a tool call's content of every type, its
// locations and its latest arguments go from event to wire and back
// unchanged, and clearing the content (an empty list) survives.
func TestToolCallRoundTrip(t *testing.T) {
	old, line := "a\n", 3
	text := message.Text("ran")
	info := &event.ToolCallInfo{ID: "c1", Title: "Edit a.txt", Kind: "edit", Status: event.StatusCompleted,
		RawInput: json.RawMessage(`{"file_path":"/w/a.txt"}`), RawOutput: json.RawMessage(`"done"`),
		Content: []event.ToolContent{{Block: &text}, {Diff: &event.Diff{Path: "/w/a.txt", OldText: &old, NewText: "b\n"}},
			{Diff: &event.Diff{Path: "/w/new.txt", NewText: "n"}}, {TerminalID: "term-9"}},
		Locations: []event.Location{{Path: "/w/a.txt", Line: &line}, {Path: "/w/new.txt"}}}
	for _, kind := range []event.Kind{event.ToolCall, event.ToolCallUpdate} {
		u, ok := UpdateFromEvent(event.Event{Kind: kind, Tool: info})
		if !ok {
			t.Fatal(kind)
		}
		raw, _ := json.Marshal(SessionNotification{SessionID: "s", Update: u})
		var n SessionNotification
		if err := json.Unmarshal(raw, &n); err != nil {
			t.Fatal(err)
		}
		ev, ok := EventFromUpdate("s", n.Update)
		if !ok || !reflect.DeepEqual(ev.Tool, info) {
			t.Errorf("%s: %s\n came back as %+v", kind, raw, ev.Tool)
		}
		if !strings.Contains(string(raw), `"oldText":null`) {
			t.Errorf("a new file's diff must say oldText null: %s", raw)
		}
	}
	cleared := &event.ToolCallInfo{ID: "c1", Content: []event.ToolContent{}, Locations: []event.Location{}}
	u, _ := UpdateFromEvent(event.Event{Kind: event.ToolCallUpdate, Tool: cleared})
	raw, _ := json.Marshal(u)
	if string(raw) != `{"sessionUpdate":"tool_call_update","toolCallId":"c1","content":[],"locations":[]}` {
		t.Errorf("cleared: %s", raw)
	}
	u, _ = UpdateFromEvent(event.Event{Kind: event.ToolCallUpdate, Tool: &event.ToolCallInfo{ID: "c1", Status: "in_progress"}})
	if raw, _ := json.Marshal(u); string(raw) != `{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"in_progress"}` {
		t.Errorf("an update without content must not gain fields: %s", raw)
	}
}

func TestUsageAndCost(t *testing.T) {
	var resp PromptResponse
	in := `{"stopReason":"end_turn","usage":{"totalTokens":30,"inputTokens":10,"outputTokens":20,"thoughtTokens":12}}`
	if err := json.Unmarshal([]byte(in), &resp); err != nil || resp.Usage.ThoughtTokens == nil || *resp.Usage.ThoughtTokens != 12 {
		t.Fatalf("%+v %v", resp, err)
	}
	if out, _ := json.Marshal(resp); canonJSON(t, string(out)) != canonJSON(t, in) {
		t.Errorf("%s", out)
	}
	if u := UsageFrom(message.Usage{InputTokens: 1, OutputTokens: 5, ThoughtTokens: 3}); u.ThoughtTokens == nil || *u.ThoughtTokens != 3 {
		t.Errorf("%+v", u)
	}
	u, _ := DecodeUpdate([]byte(realUpdates[4]))
	ev, ok := EventFromUpdate("s", u)
	if !ok || ev.Usage.Cost == nil || ev.Usage.Cost.Amount != 0.25 || ev.Usage.Cost.Currency != "USD" || ev.Usage.Size != 200000 {
		t.Fatalf("%+v", ev.Usage)
	}
	back, _ := UpdateFromEvent(ev)
	if raw, _ := json.Marshal(back); canonJSON(t, string(raw)) != canonJSON(t, realUpdates[4]) {
		t.Errorf("%s", raw)
	}
}

// BenchmarkDecodeUpdate: the host decodes every update an agent sends.
// "floor" is a strict decode into a plain struct with the same fields,
// what the host did before decoding leniently.
func BenchmarkDecodeUpdate(b *testing.B) {
	chunk := []byte(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"tok123 "}}`)
	tool := []byte(realUpdates[1])
	type floor struct {
		SessionUpdate string          `json:"sessionUpdate"`
		Content       *ContentBlock   `json:"content,omitempty"`
		ToolCallID    string          `json:"toolCallId,omitempty"`
		Title         *string         `json:"title,omitempty"`
		Kind          string          `json:"kind,omitempty"`
		Status        string          `json:"status,omitempty"`
		RawInput      json.RawMessage `json:"rawInput,omitempty"`
		RawOutput     json.RawMessage `json:"rawOutput,omitempty"`
		Meta          map[string]any  `json:"_meta,omitempty"`
	}
	b.Run("chunk/floor", func(b *testing.B) {
		for b.Loop() {
			var f floor
			json.Unmarshal(chunk, &f)
		}
	})
	b.Run("chunk", func(b *testing.B) {
		for b.Loop() {
			DecodeUpdate(chunk)
		}
	})
	b.Run("tool_call_update", func(b *testing.B) {
		for b.Loop() {
			DecodeUpdate(tool)
		}
	})
}

// TestUpdateHTMLEscaping: an update escapes <, > and & only as the encoder
// that writes it is set to: `prompt --json` does not, json.Marshal does.
func TestUpdateHTMLEscaping(t *testing.T) {
	diff := event.ToolContent{Diff: &event.Diff{Path: "/w/a.html", NewText: "<p>a & b</p>"}}
	u, _ := UpdateFromEvent(event.Event{Kind: event.ToolCall, Tool: &event.ToolCallInfo{ID: "c", Title: "Write <a>", Content: []event.ToolContent{diff}}})
	u.Meta = map[string]any{"note": "<x>"}
	n := SessionNotification{SessionID: "s", Update: u}
	var plain strings.Builder
	enc := json.NewEncoder(&plain)
	enc.SetEscapeHTML(false)
	enc.Encode(n)
	if !strings.Contains(plain.String(), `"newText":"<p>a & b</p>"`) || !strings.Contains(plain.String(), `"note":"<x>"`) ||
		!strings.Contains(plain.String(), `"title":"Write <a>"`) {
		t.Errorf("unescaped encoder: %s", plain.String())
	}
	escaped, _ := json.Marshal(n)
	if strings.ContainsAny(string(escaped), "<>&") {
		t.Errorf("json.Marshal: %s", escaped)
	}
}
