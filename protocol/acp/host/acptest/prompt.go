package acptest

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/openheim/openheim/protocol/jsonrpc"
)

// DefaultReply is the text of the update a prompt streams when
// Script.Updates is empty.
const DefaultReply = "hello from fake"

// TextChunk returns an agent_message_chunk update carrying text, for
// Script.Updates.
func TextChunk(text string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{
		"sessionUpdate": "agent_message_chunk",
		"content":       map[string]any{"type": "text", "text": text},
	})
	return b
}

// PermissionParams returns session/request_permission params for
// Script.AskPermission: tool call "fake-call-1" with the options
// "allow-once" (allow_once) and "reject-once" (reject_once). The fake does
// not announce the tool call with a tool_call update first, so hosts must
// not require one.
func PermissionParams() *json.RawMessage {
	raw := json.RawMessage(`{"toolCall":{"toolCallId":"fake-call-1","title":"Run the fake tool","kind":"execute","status":"pending"},` +
		`"options":[{"optionId":"allow-once","name":"Allow","kind":"allow_once"},{"optionId":"reject-once","name":"Reject","kind":"reject_once"}]}`)
	return &raw
}

func (a *agent) update(sessionID string, u json.RawMessage) {
	a.rpc.Notify("session/update", map[string]any{"sessionId": sessionID, "update": u})
}

func (a *agent) chunk(sessionID, text string) { a.update(sessionID, TextChunk(text)) }

func (a *agent) prompt(ctx context.Context, params json.RawMessage) (any, error) {
	registered := false
	defer func() {
		if !registered { // keep the in-flight count right (see promptsRead)
			a.mu.Lock()
			a.promptsStarted++
			a.mu.Unlock()
		}
	}()
	var p struct {
		SessionID string            `json:"sessionId"`
		Prompt    []json.RawMessage `json:"prompt"`
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if err := a.checkAuth(); err != nil {
		return nil, err
	}
	s, err := a.lookup(p.SessionID)
	if err != nil {
		return nil, err
	}
	if p.Prompt == nil {
		return nil, jsonrpc.NewError(jsonrpc.InvalidParams, "prompt is required")
	}
	cancelled, end := a.startTurn(s)
	registered = true
	defer end()

	a.mu.Lock()
	garbage := !a.garbageDone
	a.garbageDone = true
	a.mu.Unlock()
	if garbage {
		a.writeRaw(a.script.Garbage)
	}
	a.announceCommands(s)
	a.clientCalls(ctx, s)

	if resp, ended, err := a.sendUpdates(ctx, s.id, cancelled); ended {
		return resp, err
	}
	if late := a.script.LateUpdates; len(late) > 0 {
		time.AfterFunc(a.script.LateDelay, func() {
			for _, u := range late {
				a.update(s.id, u)
			}
		})
	}
	switch {
	case a.script.CrashInPrompt:
		a.crash()
		return nil, errDead
	case a.script.PromptError != nil:
		return nil, a.script.PromptError
	case a.script.HangPrompt:
		select {
		case <-cancelled:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	select {
	case <-cancelled:
		// Cancellation always wins, even when the turn finished meanwhile:
		// the spec wants "cancelled" once the client has cancelled.
		return stop("cancelled"), nil
	default:
	}
	if a.script.StopReason != "" {
		return stop(a.script.StopReason), nil
	}
	return stop("end_turn"), nil
}

// sendUpdates sends the script's updates (the default reply when it has
// none), each after UpdateDelay; ended says the turn ended meanwhile, with
// resp and err its answer.
func (a *agent) sendUpdates(ctx context.Context, id string, cancelled <-chan struct{}) (resp any, ended bool, err error) {
	updates := a.script.Updates
	if len(updates) == 0 {
		updates = []json.RawMessage{TextChunk(DefaultReply)}
	}
	for _, u := range updates {
		if d := a.script.UpdateDelay; d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-cancelled:
				t.Stop()
				return stop("cancelled"), true, nil
			case <-ctx.Done():
				t.Stop()
				return nil, true, ctx.Err()
			}
		}
		a.update(id, u)
	}
	return nil, false, nil
}

func stop(reason string) map[string]any { return map[string]any{"stopReason": reason} }

// clientCalls makes the requests the script asks for and echoes their
// outcomes as chunks; a failed call is echoed too, so tests see it.
func (a *agent) clientCalls(ctx context.Context, s *session) {
	sid := s.id
	if a.script.AskPermission != nil {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(*a.script.AskPermission, &m); err != nil || m == nil {
			m = map[string]json.RawMessage{}
		}
		m["sessionId"], _ = json.Marshal(sid)
		var res struct {
			Outcome struct {
				Outcome  string `json:"outcome"`
				OptionID string `json:"optionId"`
			} `json:"outcome"`
		}
		if err := a.rpc.Call(ctx, "session/request_permission", m, &res); err != nil {
			a.chunk(sid, "permission error: "+err.Error())
		} else if res.Outcome.Outcome == "selected" {
			a.chunk(sid, "permission: "+res.Outcome.OptionID)
		} else {
			a.chunk(sid, "permission: "+res.Outcome.Outcome)
		}
	}
	if a.script.ReadFile != "" {
		var res struct {
			Content string `json:"content"`
		}
		if err := a.rpc.Call(ctx, "fs/read_text_file", map[string]any{"sessionId": sid, "path": a.script.ReadFile}, &res); err != nil {
			a.chunk(sid, "read error: "+err.Error())
		} else {
			a.chunk(sid, "read: "+res.Content)
		}
	}
	if w := a.script.WriteFile; w != nil {
		if err := a.rpc.Call(ctx, "fs/write_text_file", map[string]any{"sessionId": sid, "path": w[0], "content": w[1]}, nil); err != nil {
			a.chunk(sid, "write error: "+err.Error())
		} else {
			a.chunk(sid, "wrote: "+w[0])
		}
	}
	if len(a.script.Terminal) > 0 {
		out, err := a.runTerminal(ctx, s)
		if err != nil {
			out = "terminal error: " + err.Error()
		}
		a.chunk(sid, out)
	}
}

func (a *agent) runTerminal(ctx context.Context, s *session) (string, error) {
	cmd := a.script.Terminal
	var created struct {
		TerminalID string `json:"terminalId"`
	}
	err := a.rpc.Call(ctx, "terminal/create", map[string]any{
		"sessionId": s.id, "command": cmd[0], "args": append([]string{}, cmd[1:]...),
		"env": []any{}, "cwd": s.cwd,
	}, &created)
	if err != nil {
		return "", fmt.Errorf("create: %w", err)
	}
	ids := map[string]any{"sessionId": s.id, "terminalId": created.TerminalID}
	// Release even on failure: hosts must free the terminal either way.
	defer a.rpc.Call(ctx, "terminal/release", ids, nil)
	var exit struct {
		ExitCode *int    `json:"exitCode"`
		Signal   *string `json:"signal"`
	}
	if err := a.rpc.Call(ctx, "terminal/wait_for_exit", ids, &exit); err != nil {
		return "", fmt.Errorf("wait_for_exit: %w", err)
	}
	var out struct {
		Output string `json:"output"`
	}
	if err := a.rpc.Call(ctx, "terminal/output", ids, &out); err != nil {
		return "", fmt.Errorf("output: %w", err)
	}
	status := "?"
	switch {
	case exit.ExitCode != nil:
		status = fmt.Sprint(*exit.ExitCode)
	case exit.Signal != nil:
		status = "signal:" + *exit.Signal
	}
	return fmt.Sprintf("terminal: %s|exit=%s", out.Output, status), nil
}
