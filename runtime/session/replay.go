package session

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/message"
)

// Replay turns a stored conversation into the events a client receives on
// session/load, so it can rebuild its view with the same code that renders a
// live turn. Tool calls replay as in_progress then their final update
// (DESIGN.md §3). kindOf maps a tool name to an ACP tool kind; nil means
// every tool is "other".
func Replay(conv *Conversation, kindOf func(toolName string) string) []event.Event {
	id := conv.Meta.ID
	var out []event.Event
	chunk := func(kind event.Kind, b message.Block) {
		out = append(out, event.Event{SessionID: id, Kind: kind, Content: &b})
	}
	for _, m := range conv.Messages {
		if m.Role == message.RoleSystem {
			continue
		}
		for _, b := range m.Content {
			switch b.Type {
			case message.TypeText, message.TypeImage:
				if m.Role == message.RoleUser {
					chunk(event.UserMessageChunk, b)
				} else {
					chunk(event.AgentMessageChunk, b)
				}
			case message.TypeThinking:
				chunk(event.AgentThoughtChunk, message.Text(b.Thinking))
			case message.TypeRedactedThinking:
				// Opaque provider data: say the model thought, as the
				// live turn did, without showing it.
				chunk(event.AgentThoughtChunk, message.Text(message.RedactedThinkingNotice))
			case message.TypeToolUse:
				kind := ""
				if kindOf != nil {
					kind = kindOf(b.Name)
				}
				if kind == "" {
					kind = "other"
				}
				out = append(out, event.Event{SessionID: id, Kind: event.ToolCall, Tool: &event.ToolCallInfo{
					ID: b.ID, Title: b.Name, Kind: kind, Status: event.StatusInProgress, RawInput: rawInput(b.Arguments),
				}})
			case message.TypeToolResult:
				status := event.StatusCompleted
				if b.IsError {
					status = event.StatusFailed
				}
				output, _ := json.Marshal(b.Content) // a string always marshals
				out = append(out, event.Event{SessionID: id, Kind: event.ToolCallUpdate, Tool: &event.ToolCallInfo{
					ID: b.ToolCallID, Status: status, RawOutput: output,
				}})
			}
		}
	}
	return out
}

// rawInput is the arguments object for ACP's rawInput. Models sometimes emit
// arguments that are not an object; those are kept as a JSON string rather
// than dropped, so the client still shows what was asked.
func rawInput(args string) json.RawMessage {
	trimmed := strings.TrimSpace(args)
	if trimmed == "" {
		return json.RawMessage(`{}`)
	}
	if trimmed[0] == '{' {
		var buf bytes.Buffer
		if json.Compact(&buf, []byte(trimmed)) == nil {
			return buf.Bytes()
		}
	}
	s, _ := json.Marshal(args)
	return s
}
