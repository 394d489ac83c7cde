package agent

import (
	"encoding/json"

	"github.com/openheim/openheim/runtime/event"
)

// permissionContentJSON is what a session/request_permission's toolCall
// carries of the call's content, as ACP ToolCallContent, so the client
// can show what an edit changes before it is allowed: a diff is
// {"type":"diff","path","oldText","newText"} with oldText null for a new
// file. nil when there is none. (The tool_call updates' own mapping is
// acp.UpdateFromEvent's.)
func permissionContentJSON(c []event.ToolContent) json.RawMessage {
	var out []any
	for _, item := range c {
		switch {
		case item.Diff != nil:
			d := item.Diff
			out = append(out, map[string]any{"type": "diff", "path": d.Path, "oldText": d.OldText, "newText": d.NewText})
		case item.TerminalID != "":
			out = append(out, map[string]any{"type": "terminal", "terminalId": item.TerminalID})
		case item.Block != nil && item.Block.Text != "":
			out = append(out, map[string]any{"type": "content", "content": map[string]any{"type": "text", "text": item.Block.Text}})
		}
	}
	return marshalNonEmpty(out)
}

// permissionLocations is the files c's diffs change, as ACP
// ToolCallLocations ({path}); nil when there are none.
func permissionLocations(c []event.ToolContent) json.RawMessage {
	var out []any
	for _, item := range c {
		if item.Diff != nil {
			out = append(out, map[string]any{"path": item.Diff.Path})
		}
	}
	return marshalNonEmpty(out)
}

func marshalNonEmpty(v []any) json.RawMessage {
	if len(v) == 0 {
		return nil
	}
	b, _ := json.Marshal(v)
	return b
}
