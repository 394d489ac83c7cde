package message

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestBlockJSONShapes(t *testing.T) {
	sig := "s"
	cases := []struct {
		b    Block
		want string
	}{
		{Text(""), `{"type":"text","text":""}`},
		{Block{Type: TypeThinking, Thinking: "t"}, `{"type":"thinking","thinking":"t"}`},
		{Block{Type: TypeThinking, Thinking: "t", Signature: &sig}, `{"type":"thinking","thinking":"t","signature":"s"}`},
		{Block{Type: TypeText, Text: "a", Signature: &sig}, `{"type":"text","text":"a","signature":"s"}`},
		{Block{Type: TypeThinking, Thinking: "t", Signature: &sig, Origin: "openai_responses"},
			`{"type":"thinking","thinking":"t","signature":"s","origin":"openai_responses"}`},
		{Block{Type: TypeRedactedThinking, Data: "x"}, `{"type":"redacted_thinking","data":"x"}`},
		{Block{Type: TypeImage, Data: "AA==", MimeType: "image/png"}, `{"type":"image","data":"AA==","mime_type":"image/png"}`},
		{Block{Type: TypeImage, Data: "AA==", MimeType: "image/png", FileID: "file_1"}, `{"type":"image","data":"AA==","mime_type":"image/png","file_id":"file_1"}`},
		{Block{Type: TypeText, Text: "a", FileID: "file_2"}, `{"type":"text","text":"a","file_id":"file_2"}`},
		{Block{Type: TypeToolUse, ID: "c", Name: "n", Arguments: `{"a":1}`}, `{"type":"tool_use","id":"c","name":"n","arguments":"{\"a\":1}"}`},
		{ToolResult("c", "n", "out", false), `{"type":"tool_result","tool_call_id":"c","tool_name":"n","content":"out"}`},
		{ToolResult("c", "n", "", true), `{"type":"tool_result","tool_call_id":"c","tool_name":"n","content":"","is_error":true}`},
	}
	for _, c := range cases {
		got, err := json.Marshal(c.b)
		if err != nil || string(got) != c.want {
			t.Errorf("marshal %+v = %s, %v; want %s", c.b, got, err, c.want)
			continue
		}
		var back Block
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatal(err)
		}
		again, _ := json.Marshal(back)
		if string(again) != c.want {
			t.Errorf("round trip %s -> %s", c.want, again)
		}
	}
}

func TestUnknownBlockTypeRejected(t *testing.T) {
	var b Block
	if err := json.Unmarshal([]byte(`{"type":"video"}`), &b); err == nil || !strings.Contains(err.Error(), "video") {
		t.Fatalf("err = %v", err)
	}
	if _, err := json.Marshal(Block{Type: "video"}); err == nil {
		t.Fatal("marshal of unknown type must fail")
	}
}

func TestHelpers(t *testing.T) {
	m := Message{Role: RoleAssistant, Content: []Block{Text("a"), {Type: TypeToolUse, ID: "1"}, Text("b")}}
	if m.JoinText() != "ab" || len(m.ToolUses()) != 1 {
		t.Fatal(m.JoinText(), m.ToolUses())
	}
	if (Usage{InputTokens: 1, OutputTokens: 2, CacheCreationTokens: 3, CacheReadTokens: 4, ThoughtTokens: 9}).Total() != 10 {
		t.Fatal("total")
	}
}
