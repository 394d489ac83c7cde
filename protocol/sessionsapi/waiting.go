package sessionsapi

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/openheim/openheim/runtime/ids"
	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/permission"
	"github.com/openheim/openheim/runtime/tools"
)

// waitState is what a turn of the session waits for from its client:
// answers to permission questions (elicitations) and outputs of
// client-side tools. While anything waits the session is "waiting".
type waitState struct {
	asks    map[string]*pendingAsk
	outputs map[string]chan string // tool call id -> its output
}

type pendingAsk struct {
	answer  chan string // "accept", "decline" or "cancel"
	request map[string]any
}

func (w *waitState) init() {
	w.asks = map[string]*pendingAsk{}
	w.outputs = map[string]chan string{}
}

func (w *waitState) count() int { return len(w.asks) + len(w.outputs) }

// Ask implements permission.Asker for the session's turns: the question
// goes out on the stream as response.elicitation_request and the answer
// comes back through POST .../elicitations/{id}/resolve.
func (t *tracker) Ask(ctx context.Context, r permission.Request) (permission.Outcome, error) {
	id := ids.New("elic_")
	args := json.RawMessage(r.Args)
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	p := &pendingAsk{answer: make(chan string, 1), request: map[string]any{
		"elicitation_id": id, "conversation_id": t.conv,
		"params": map[string]any{"message": "Allow " + r.Tool + "?", "tool": r.Tool, "kind": r.Kind,
			"call_id": r.ToolCallID, "arguments": args, "actions": []string{"accept", "decline"},
			"target_session_id": t.conv}}}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return permission.RejectOnce, errors.New("the session was closed")
	}
	t.waiting.asks[id] = p
	t.emitSSE("response.elicitation_request", copyMap(p.request))
	t.emitStatus()
	t.mu.Unlock()

	var answer string
	select {
	case answer = <-p.answer:
	case <-ctx.Done():
		answer = "cancel"
	}
	t.mu.Lock()
	delete(t.waiting.asks, id)
	if !t.closed {
		t.emitSSE("response.elicitation_resolved", map[string]any{"elicitation_id": id, "action": answer})
		t.emitStatus()
	}
	t.mu.Unlock()
	if answer == "accept" {
		return permission.AllowOnce, nil
	}
	return permission.RejectOnce, nil
}

// resolve answers elicitation id; any action but "accept" denies.
func (t *tracker) resolve(id, action string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.waiting.asks[id]
	if p == nil {
		return notFound("no pending elicitation %q in this session", id)
	}
	select {
	case p.answer <- action:
	default: // answered already
	}
	return nil
}

// pendingElicitations are the open questions, for the snapshot.
func (t *tracker) pendingElicitations() []map[string]any {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := []map[string]any{}
	for _, p := range t.waiting.asks {
		out = append(out, copyMap(p.request))
	}
	return out
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// ClientTool is a function the client runs: the model calls it, the
// stream shows the function_call item, the session waits, and the client
// posts a function_call_output event with the same call_id.
type ClientTool struct {
	Type        string          `json:"type"` // "function"
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

type clientTool struct {
	spec ClientTool
	t    *tracker
}

func (c *clientTool) Spec() llm.ToolSpec {
	params := c.spec.Parameters
	if len(params) == 0 {
		params = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return llm.ToolSpec{Name: c.spec.Name, Description: c.spec.Description, Parameters: params}
}

// Kind is "other": the client decides what its tool does; the permission
// rules do not apply to it (the engine runs Extra tools unasked).
func (c *clientTool) Kind() string { return tools.KindOther }

func (c *clientTool) Run(ctx context.Context, _ json.RawMessage) tools.Result {
	out, err := c.t.awaitOutput(ctx, tools.CallID(ctx))
	if err != nil {
		return tools.Errorf("%v", err)
	}
	return tools.Result{Content: out}
}

// awaitOutput parks the turn until the client posts the call's output.
func (t *tracker) awaitOutput(ctx context.Context, callID string) (string, error) {
	if callID == "" {
		return "", errors.New("client tool called without a call id")
	}
	ch := make(chan string, 1)
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return "", errors.New("the session was closed")
	}
	t.waiting.outputs[callID] = ch
	t.emitStatus()
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		delete(t.waiting.outputs, callID)
		if !t.closed {
			t.emitStatus()
		}
		t.mu.Unlock()
	}()
	select {
	case out := <-ch:
		return out, nil
	case <-ctx.Done():
		// The turn ended without the output: the client stops its task.
		t.mu.Lock()
		if !t.closed {
			t.emitSSE("response.client_task.cancel", map[string]any{"conversation_id": t.conv, "call_id": callID})
		}
		t.mu.Unlock()
		return "", errors.New("cancelled while waiting for the client's output")
	}
}

// deliver hands the client's output to the call waiting for it.
func (t *tracker) deliver(callID, output string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	ch := t.waiting.outputs[callID]
	if ch == nil {
		return badRequest("no tool call %q is waiting for output in this session", callID)
	}
	select {
	case ch <- output:
	default:
	}
	return nil
}
