package host

import (
	"encoding/json"
	"strings"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
)

// transcript keeps an external agent's turn in openheim's session as
// messages (assistant text, thinking and tool calls, then their results),
// so `sessions show`, the sessions API and later turns see it like a
// native one, and forwards every event to the turn's sink.
type transcript struct {
	sink  event.Sink
	store session.Store
	id    string
	next  int // position of the next stored message

	assistant message.Message
	results   message.Message
	open      map[string]bool // tool calls without a result yet
	uses      map[string]int  // tool call id -> its tool_use block in assistant
	done      map[string]bool // tool calls with their result
}

// commit stores messages and says so on the stream.
func (t *transcript) commit(msgs ...message.Message) error {
	if err := t.store.Append(t.id, msgs...); err != nil {
		return err
	}
	t.sink.Emit(event.Event{SessionID: t.id, Kind: event.Committed, Messages: msgs, Index: t.next})
	t.next += len(msgs)
	return nil
}

// add forwards ev and folds it into the transcript.
func (t *transcript) add(ev event.Event) {
	ev.SessionID = t.id
	t.sink.Emit(ev)
	switch ev.Kind {
	case event.AgentMessageChunk, event.AgentThoughtChunk:
		if ev.Content == nil {
			return
		}
		if len(t.results.Content) > 0 && len(t.open) == 0 {
			// Text after every call's result starts the next step.
			t.flush(false)
		}
		typ, text := message.TypeText, ev.Content.Text
		if ev.Kind == event.AgentThoughtChunk {
			typ = message.TypeThinking
		}
		blocks := t.assistant.Content
		if n := len(blocks); n > 0 && blocks[n-1].Type == typ {
			if typ == message.TypeText {
				blocks[n-1].Text += text
			} else {
				blocks[n-1].Thinking += text
			}
			return
		}
		b := message.Block{Type: typ, Text: text}
		if typ == message.TypeThinking {
			b = message.Block{Type: typ, Thinking: text}
		}
		t.assistant.Content = append(t.assistant.Content, b)
	case event.ToolCall, event.ToolCallUpdate:
		t.tool(ev.Tool)
	}
}

// tool folds a tool call's event in: the first one opens its tool_use
// (after the results of a step whose calls are all done, a new step), any
// later one with arguments replaces them (Claude sends the real input
// only in an update), and the final one stores its result: the rawOutput,
// else the text of its content (Codex reports a failed command so).
func (t *transcript) tool(c *event.ToolCallInfo) {
	if c == nil || c.ID == "" || t.done[c.ID] {
		return
	}
	if t.open == nil {
		t.open, t.uses, t.done = map[string]bool{}, map[string]int{}, map[string]bool{}
	}
	if !t.open[c.ID] {
		if len(t.results.Content) > 0 && len(t.open) == 0 {
			t.flush(false)
		}
		name := c.Title
		if name == "" {
			name = c.Kind
		}
		t.uses[c.ID] = len(t.assistant.Content)
		t.assistant.Content = append(t.assistant.Content, message.Block{Type: message.TypeToolUse, ID: c.ID, Name: name, Arguments: "{}"})
		t.open[c.ID] = true
	}
	use := &t.assistant.Content[t.uses[c.ID]]
	if args := strings.TrimSpace(string(c.RawInput)); args != "" && json.Valid([]byte(args)) {
		use.Arguments = args
	}
	if c.Status != event.StatusCompleted && c.Status != event.StatusFailed {
		return
	}
	delete(t.open, c.ID)
	t.done[c.ID] = true
	out := outputText(c.RawOutput)
	if len(c.RawOutput) == 0 {
		out = acp.ContentText(c.Content)
	}
	t.results.Content = append(t.results.Content, message.ToolResult(c.ID, use.Name, out, c.Status == event.StatusFailed))
}

// flush stores the step built so far; at the end of the turn (final),
// calls left without a result get one.
func (t *transcript) flush(final bool) error {
	if final {
		for _, b := range t.assistant.Content {
			if b.Type == message.TypeToolUse && t.open[b.ID] {
				t.results.Content = append(t.results.Content, message.ToolResult(b.ID, b.Name, "No result: the turn ended first.", true))
			}
		}
		t.open = nil
	}
	var msgs []message.Message
	if len(t.assistant.Content) > 0 {
		t.assistant.Role = message.RoleAssistant
		msgs = append(msgs, t.assistant)
	}
	if len(t.results.Content) > 0 && len(msgs) > 0 {
		t.results.Role = message.RoleTool
		msgs = append(msgs, t.results)
	}
	t.assistant, t.results = message.Message{}, message.Message{}
	clear(t.uses)
	if len(msgs) == 0 {
		return nil
	}
	return t.commit(msgs...)
}

// outputText is a tool result as text: a JSON string as itself, anything
// else as its JSON.
func outputText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}
