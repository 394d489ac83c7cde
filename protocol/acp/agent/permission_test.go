package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/runtime/llm/llmtest"
)

// session/request_permission shows the client what an edit changes, as
// ACP defines it: toolCall.content [{"type":"diff","path","oldText",
// "newText"}] (oldText null for a new file) and toolCall.locations.
func TestPermissionRequestCarriesTheDiff(t *testing.T) {
	c := connect(t, "")
	c.init(t, 1)
	id := c.newSession(t)
	os.WriteFile(filepath.Join(c.work, "a.txt"), []byte("one\ntwo\n"), 0o644)
	c.srv.Enqueue(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{ID: "e", Name: "edit_file", Arguments: `{"path":"a.txt","old_string":"two","new_string":"2"}`},
		}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "w", Name: "write_file", Arguments: `{"path":"new.txt","content":"hi\n"}`}}},
		llmtest.Reply{Text: []string{"ok"}},
	)
	c.answer = acp.PermissionAllowOnce
	c.mustCall(t, acp.MethodSessionPrompt, map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "edit"}}})
	c.mu.Lock()
	asks := c.asks
	c.mu.Unlock()
	if len(asks) != 2 {
		t.Fatalf("asked %d times", len(asks))
	}
	type diff struct {
		Type    string  `json:"type"`
		Path    string  `json:"path"`
		OldText *string `json:"oldText"`
		NewText string  `json:"newText"`
	}
	var reqs [2]struct {
		ToolCall struct {
			ToolCallID string            `json:"toolCallId"`
			Content    []diff            `json:"content"`
			Locations  []json.RawMessage `json:"locations"`
		} `json:"toolCall"`
	}
	for i := range reqs {
		if err := json.Unmarshal(asks[i], &reqs[i]); err != nil {
			t.Fatal(err)
		}
	}
	edit, write := reqs[0].ToolCall, reqs[1].ToolCall
	if len(edit.Content) != 1 || edit.Content[0].Type != "diff" || edit.Content[0].Path != filepath.Join(c.work, "a.txt") ||
		edit.Content[0].OldText == nil || *edit.Content[0].OldText != "one\ntwo\n" || edit.Content[0].NewText != "one\n2\n" {
		t.Errorf("edit_file's request: %s", asks[0])
	}
	if len(edit.Locations) != 1 {
		t.Errorf("edit_file's locations: %s", asks[0])
	}
	// A new file: oldText is null, not left out.
	var raw struct {
		ToolCall struct {
			Content []map[string]json.RawMessage `json:"content"`
		} `json:"toolCall"`
	}
	json.Unmarshal(asks[1], &raw)
	if len(write.Content) != 1 || write.Content[0].NewText != "hi\n" || len(raw.ToolCall.Content) != 1 || string(raw.ToolCall.Content[0]["oldText"]) != "null" {
		t.Errorf("write_file's request: %s", asks[1])
	}
}
