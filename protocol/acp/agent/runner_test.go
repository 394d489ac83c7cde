package agent

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/protocol/jsonrpc"
	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/session"
)

// echoRunner is an engine.Runner that is not the engine.
type echoRunner struct{ inputs []string }

func (r *echoRunner) Prompt(_ context.Context, req engine.Request) (session.Meta, event.End, error) {
	r.inputs = append(r.inputs, req.Input[0].Text)
	req.Sink.Emit(event.Text(req.SessionID, event.AgentMessageChunk, "from the runner"))
	return session.Meta{ID: req.SessionID}, event.End{StopReason: event.StopEndTurn}, nil
}

// TestAnyRunnerRunsTurns: a connection's turns run on Agent.Runner, which
// need not be the engine, and stream to the client as the engine's do.
func TestAnyRunnerRunsTurns(t *testing.T) {
	c := connect(t, "") // for its engine, store and work directory
	r := &echoRunner{}
	agentIn, clientOut := io.Pipe()
	clientIn, agentOut := io.Pipe()
	ag := &Agent{Engine: c.eng, Runner: r, Version: "test"}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		ag.Serve(ctx, jsonrpc.NewLineStream(agentIn, agentOut, agentOut))
		close(done)
	}()
	c2 := &client{srv: c.srv, eng: c.eng, work: c.work}
	c2.peer = jsonrpc.NewPeer(jsonrpc.NewLineStream(clientIn, clientOut, clientOut), c2)
	go c2.peer.Run(ctx)
	t.Cleanup(func() { cancel(); clientOut.Close(); <-done })

	c2.init(t, 1)
	id := c2.newSession(t)
	var resp acp.PromptResponse
	json.Unmarshal(c2.mustCall(t, acp.MethodSessionPrompt, map[string]any{"sessionId": id,
		"prompt": []any{map[string]any{"type": "text", "text": "hello"}}}), &resp)
	if resp.StopReason != event.StopEndTurn {
		t.Errorf("stopReason %q", resp.StopReason)
	}
	if len(r.inputs) != 1 || r.inputs[0] != "hello" || len(c.srv.Requests()) != 0 {
		t.Errorf("runner got %v; the engine's model got %d requests", r.inputs, len(c.srv.Requests()))
	}
	c2.mu.Lock()
	defer c2.mu.Unlock()
	if n := len(c2.updates); n == 0 || !strings.Contains(string(c2.updates[n-1]), "from the runner") {
		t.Errorf("updates %s", c2.updates)
	}
}
