package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/llm/llmtest"
	"github.com/openheim/openheim/runtime/mcp"
	"github.com/openheim/openheim/runtime/redact/redacttest"
)

// TestAgentMasksSecrets: with a secret planted in every config field, a
// failing MCP server's status in initialize._meta and the error of a
// prompt whose provider answers 401 quoting the request and every secret
// show none of them.
func TestAgentMasksSecrets(t *testing.T) {
	t.Setenv(redacttest.EnvVar, redacttest.EnvKey)
	c := connectWith(t, redacttest.Config, func(e *engine.Engine) {
		m := mcp.NewManager(e.Config.MCPServers, mcp.Options{Version: "test", Redact: e.Redactor(), Warn: func(string, error) {}})
		t.Cleanup(func() { m.Close() })
		m.Start(context.Background())
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		m.Wait(ctx)
		e.MCP = m
	})
	init := c.mustCall(t, acp.MethodInitialize, map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	if !strings.Contains(string(init), `"name":"quoting"`) || !strings.Contains(string(init), `\u003credacted\u003e`) {
		t.Fatalf("initialize does not report the failed server: %s", init)
	}
	if leaks := redacttest.Leaks(string(init)); len(leaks) > 0 {
		t.Errorf("initialize._meta shows %v: %s", leaks, init)
	}

	id := c.newSession(t)
	c.srv.Enqueue(llmtest.Reply{Status: 401, EchoRequest: true, ErrorBody: redacttest.Known()})
	_, err := c.call(acp.MethodSessionPrompt, map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "hi"}}})
	if err == nil || !strings.Contains(err.Error(), "HTTP 401") {
		t.Fatalf("want the provider's 401, got %v", err)
	}
	if leaks := redacttest.Leaks(err.Error()); len(leaks) > 0 {
		t.Errorf("the prompt error shows %v: %v", leaks, err)
	}
	c.mu.Lock()
	updates, _ := json.Marshal(c.updates)
	c.mu.Unlock()
	if leaks := redacttest.Leaks(string(updates)); len(leaks) > 0 {
		t.Errorf("session updates show %v", leaks)
	}
}
