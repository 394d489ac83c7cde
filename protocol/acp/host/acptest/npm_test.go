//go:build unix

package acptest_test

import (
	"context"
	"errors"
	"log/slog"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/openheim/openheim/protocol/acp/host/acptest"
	"github.com/openheim/openheim/protocol/jsonrpc"
)

// TestNPMAgentsWithoutCredentials checks what PEERS.md says the real
// agents do offline, so a version bump that changes it shows up here.
func TestNPMAgentsWithoutCredentials(t *testing.T) {
	for _, tc := range []struct {
		name, agentName string
		newFails        bool // codex-acp refuses session/new, claude-agent-acp only the prompt
	}{
		{"codex-acp", "codex-acp", true},
		{"claude-agent-acp", "@zed-industries/claude-agent-acp", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			command, args := acptest.NPMAgent(t, tc.name)
			cmd := exec.Command(command, args...)
			cmd.Env = acptest.OfflineEnv(t)
			cmd.Dir = t.TempDir()
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			stderr := &syncBuffer{}
			cmd.Stderr = stderr
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("%s stderr:\n%s", tc.name, stderr)
				}
			})
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				// Neither agent exits on EOF once it has a session, and
				// codex-acp's native child outlives a SIGTERM to node alone.
				syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				cmd.Wait()
			})
			peer := jsonrpc.NewPeer(jsonrpc.NewLineStream(stdout, stdin, nil), nil, jsonrpc.WithLogger(slog.New(slog.DiscardHandler)))
			go peer.Run(context.Background())
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()

			var init struct {
				ProtocolVersion int
				AgentInfo       struct{ Name string }
			}
			if err := peer.Call(ctx, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}, &init); err != nil {
				t.Fatalf("initialize: %v", err)
			}
			if init.ProtocolVersion != 1 || init.AgentInfo.Name != tc.agentName {
				t.Fatalf("initialize: %+v", init)
			}
			var s struct{ SessionID string }
			err = peer.Call(ctx, "session/new", map[string]any{"cwd": cmd.Dir, "mcpServers": []any{}}, &s)
			if tc.newFails {
				wantAuth(t, err)
				return
			}
			if err != nil {
				t.Fatalf("session/new: %v", err)
			}
			err = peer.Call(ctx, "session/prompt", map[string]any{"sessionId": s.SessionID, "prompt": []any{map[string]any{"type": "text", "text": "hi"}}}, nil)
			wantAuth(t, err)
		})
	}
}

func wantAuth(t *testing.T, err error) {
	t.Helper()
	var e *jsonrpc.Error
	if !errors.As(err, &e) || e.Code != jsonrpc.AuthRequired {
		t.Fatalf("got %v, want -32000", err)
	}
}
