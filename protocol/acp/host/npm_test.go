package host

import (
	"context"
	"testing"
	"time"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/protocol/acp/host/acptest"
)

// TestHostRealAgents: Zed's Claude Code and Codex adapters, installed from
// npm by .ci/run, answer initialize through the host and, offline and
// without credentials, refuse to work with -32000, which the host reports
// as authentication required. Neither exits on EOF: Close kills them.
func TestHostRealAgents(t *testing.T) {
	for _, name := range []string{"codex-acp", "claude-agent-acp"} {
		t.Run(name, func(t *testing.T) {
			cmd, args := acptest.NPMAgent(t, name)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			start := time.Now()
			h, err := Start(ctx, AgentSpec{Name: name, Command: cmd, Args: args},
				Options{WorkDir: t.TempDir(), Environ: acptest.OfflineEnv(t), Grace: 500 * time.Millisecond,
					ClientInfo: acp.Implementation{Name: "openheim", Version: "test"}})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: start to initialize answer %v", name, time.Since(start))
			defer func() {
				h.Close()
				select {
				case <-h.Exited():
				case <-time.After(10 * time.Second):
					t.Error("the agent survived Close")
				}
			}()
			if h.Info().AgentInfo == nil || h.Info().AgentInfo.Name == "" {
				t.Errorf("no agentInfo: %s", h.Info().Capabilities)
			}
			id, err := h.NewSession(ctx, SessionOptions{})
			if err == nil {
				turn, perr := h.Prompt(ctx, id, []acp.ContentBlock{{Type: "text", Text: "hello"}})
				if perr != nil {
					t.Fatal(perr)
				}
				_, res := collect(t, turn)
				err = res.Err
			}
			if !IsAuthRequired(err) {
				t.Fatalf("offline, want authentication required; got %v", err)
			}
			t.Logf("%s: %v", name, err)
		})
	}
}
