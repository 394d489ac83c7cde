package agent

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/engine/enginetest"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm/llmtest"
	"github.com/openheim/openheim/runtime/tools"
)

// brokenServers is a configured MCP source whose only server failed.
type brokenServers struct{}

func (brokenServers) Wait(context.Context) {}
func (brokenServers) Tools() []tools.Tool  { return nil }
func (brokenServers) Status() []event.MCPServerStatus {
	why := "exit status 1"
	return []event.MCPServerStatus{{Name: "broken", Transport: "stdio", Error: &why}}
}

// TestSessionInfoAdapted: the engine opens every turn with the session's
// info; an ACP client hears of the title once, when the session gets it,
// and never of the MCP status the stream carries (initialize's _meta
// tells it).
func TestSessionInfoAdapted(t *testing.T) {
	c := connectWith(t, func(work, llmURL string) string {
		return "default_provider = \"fake\"\nwork_dir = \"" + work + "\"\n[providers.fake]\napi_base = \"" + llmURL + "\"\nmodels = [\"m1\"]\n"
	}, func(e *engine.Engine) { e.MCP = brokenServers{} })
	c.init(t, 1)
	id := c.newSession(t)
	c.srv.Enqueue(llmtest.Reply{Text: []string{"one"}}, llmtest.Reply{Text: []string{"two"}})
	for _, text := range []string{"Fix the login bug", "and the logout one"} {
		c.mustCall(t, acp.MethodSessionPrompt, map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": text}}})
	}
	c.mu.Lock()
	var infos []string
	for _, u := range c.updates {
		if strings.Contains(string(u), `"session_info_update"`) {
			infos = append(infos, string(u))
		}
	}
	c.mu.Unlock()
	if len(infos) != 1 || !strings.Contains(infos[0], `"title":"Fix the login bug"`) || !strings.Contains(infos[0], `"updatedAt":`) {
		t.Fatalf("session_info_update sent: %q, want the title once", infos)
	}
	if strings.Contains(infos[0], "mcpServerFailed") || strings.Contains(infos[0], `"model"`) {
		t.Errorf("the info carries more than ACP's title and time: %s", infos[0])
	}
}

// TestInitializeWaitsForConnectingMCPServers: initialize right after start
// waits for an MCP server still connecting, so its _meta lists the
// server's tools and its real status.
func TestInitializeWaitsForConnectingMCPServers(t *testing.T) {
	c := connectWith(t, func(work, llmURL string) string {
		return fmt.Sprintf("work_dir = %q\n[providers.fake]\napi_base = %q\ndefault_model = \"m1\"\n", work, llmURL)
	}, func(e *engine.Engine) { e.MCP = enginetest.NewSlowMCP(300 * time.Millisecond) })
	raw := string(c.mustCall(t, acp.MethodInitialize, map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}))
	if !strings.Contains(raw, `"slow__ping"`) || !strings.Contains(raw, `"connected":true`) {
		t.Errorf("initialize right after start: %.600s", raw)
	}
}
