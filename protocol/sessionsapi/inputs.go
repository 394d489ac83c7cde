package sessionsapi

import (
	"encoding/json"
	"strings"

	"github.com/openheim/openheim/runtime/ids"
	"github.com/openheim/openheim/runtime/message"
)

// Items a client queues besides messages (seed 003's function_call,
// reasoning, and an output no turn waits for): they are stored in the
// history as they are, in the order posted, when no turn runs (a run of
// their own, engine.Record), without a model call; the next message's
// turn sends them with the rest of the history. Each answers
// {"queued": true, "queued_item_id"}, and session.input.consumed carries
// that id when the item is stored.

// callData is a function_call item's data.
type callData struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	CallID    string `json:"call_id"`
}

// textPart is a part of a reasoning item: reasoning_text or summary_text.
type textPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// reasoningData is a reasoning item's data: its text as content, summary,
// or both.
type reasoningData struct {
	Content []textPart `json:"content"`
	Summary []textPart `json:"summary"`
}

// postOutput answers a client tool's call: the output of the call the
// turn waits for, or of a function_call the client queued itself (it
// must follow that call: a result belongs right after its call).
func (a *API) postOutput(t *tracker, _ string, data json.RawMessage) (any, error) {
	var out struct {
		CallID string          `json:"call_id"`
		Output json.RawMessage `json:"output"`
	}
	if err := strictData(data, &out); err != nil {
		return nil, err
	}
	text, err := toolOutputText(out.Output)
	if err != nil || out.CallID == "" {
		return nil, badRequest("function_call_output needs data {call_id, output}: output a string or JSON")
	}
	if err := t.deliver(out.CallID, text); err == nil {
		return map[string]any{"queued": true}, nil
	}
	qid, err := t.record(func(last message.Message) (message.Message, error) {
		for _, b := range last.ToolUses() {
			if b.ID == out.CallID && last.Role == message.RoleAssistant {
				return message.Message{Role: message.RoleTool, Content: []message.Block{message.ToolResult(b.ID, b.Name, text, false)}}, nil
			}
		}
		return message.Message{}, badRequest("no tool call %q waits for output in this session (a function_call's output is taken right after it)", out.CallID)
	})
	if err != nil {
		return nil, err
	}
	return map[string]any{"queued": true, "queued_item_id": qid}, nil
}

// postCall queues a function_call item: a call the client adds to the
// history (its output may follow; the next turn gives one left without
// an output a placeholder result).
func (a *API) postCall(t *tracker, _ string, data json.RawMessage) (any, error) {
	var c callData
	if err := strictData(data, &c); err != nil {
		return nil, err
	}
	if !validToolName(c.Name) {
		return nil, badRequest("function_call needs a name of 1-64 letters, digits, '_' or '-'")
	}
	if strings.TrimSpace(c.Arguments) == "" {
		c.Arguments = "{}"
	}
	if !json.Valid([]byte(c.Arguments)) {
		return nil, badRequest("function_call arguments must be a JSON string")
	}
	if c.CallID == "" {
		c.CallID = ids.New("call_")
	}
	m := message.Message{Role: message.RoleAssistant, Content: []message.Block{
		{Type: message.TypeToolUse, ID: c.CallID, Name: c.Name, Arguments: c.Arguments}}}
	qid, err := t.record(func(message.Message) (message.Message, error) { return m, nil })
	if err != nil {
		return nil, err
	}
	return map[string]any{"queued": true, "queued_item_id": qid, "call_id": c.CallID}, nil
}

// postReasoning queues a reasoning item: stored as the assistant's
// thinking (unsigned: the providers that need a signature leave it out of
// their requests).
func (a *API) postReasoning(t *tracker, _ string, data json.RawMessage) (any, error) {
	var r reasoningData
	if err := strictData(data, &r); err != nil {
		return nil, err
	}
	var text []string
	for _, p := range append(r.Summary, r.Content...) {
		if p.Type != "" && p.Type != "reasoning_text" && p.Type != "summary_text" {
			return nil, badRequest("reasoning parts are reasoning_text or summary_text, not %q", p.Type)
		}
		if strings.TrimSpace(p.Text) != "" {
			text = append(text, p.Text)
		}
	}
	if len(text) == 0 {
		return nil, badRequest("reasoning needs data {content or summary: [{type, text}]} with some text")
	}
	m := message.Message{Role: message.RoleAssistant, Content: []message.Block{
		{Type: message.TypeThinking, Thinking: strings.Join(text, "\n\n")}}}
	qid, err := t.record(func(message.Message) (message.Message, error) { return m, nil })
	if err != nil {
		return nil, err
	}
	return map[string]any{"queued": true, "queued_item_id": qid}, nil
}

// record queues an item to store as it is; make builds it from the
// message it will follow (the last queued item, else the last stored
// message), and may refuse.
func (t *tracker) record(make func(last message.Message) (message.Message, error)) (string, error) {
	t.mu.Lock()
	if err := t.acceptingLocked(); err != nil {
		t.mu.Unlock()
		return "", err
	}
	last := t.items.last
	if n := len(t.runner.recording); n > 0 {
		last = t.runner.recording[n-1] // being stored
	}
	if n := len(t.runner.queue); n > 0 {
		last = t.runner.queue[n-1].msg
	}
	m, err := make(last)
	if err != nil {
		t.mu.Unlock()
		return "", err
	}
	id := t.enqueueLocked(queuedInput{msg: m, record: true})
	t.mu.Unlock()
	t.kick()
	return id, nil
}
