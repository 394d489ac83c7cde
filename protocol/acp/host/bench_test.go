package host

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"testing"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/protocol/acp/host/acptest"
)

// BenchmarkHostUpdates is the host's cost per update of a turn, agent
// in-process: the fake agent's encoding, the pipe, the host's decoding,
// its read model and the turn's event queue. A turn streams 1,000 text
// chunks (most of what agents send) or 1,000 tool call updates (a call,
// its content and locations, Claude's shape); ns/op is per update.
func BenchmarkHostUpdates(b *testing.B) {
	const n = 1000
	chunks := make([]json.RawMessage, n)
	tools := make([]json.RawMessage, n)
	for i := range n {
		chunks[i] = acptest.TextChunk(fmt.Sprintf("tok%d ", i))
		tools[i] = json.RawMessage(fmt.Sprintf(`{"sessionUpdate":"tool_call_update","toolCallId":"t%d","title":"Edit a.go",`+
			`"rawInput":{"file_path":"/w/a.go"},"content":[{"type":"diff","path":"/w/a.go","oldText":"a","newText":"b"}],"locations":[{"path":"/w/a.go","line":3}]}`, i%50))
	}
	for _, c := range []struct {
		name string
		ups  []json.RawMessage
	}{{"text chunks", chunks}, {"tool call updates", tools}} {
		b.Run(c.name, func(b *testing.B) {
			h, _ := inProcessB(b, acptest.Script{Updates: c.ups})
			b.ResetTimer()
			for done := 0; done < b.N; done += n {
				// A session per turn, as `prompt --agent` has.
				id, err := h.NewSession(context.Background(), SessionOptions{})
				if err != nil {
					b.Fatal(err)
				}
				turn, err := h.Prompt(context.Background(), id, []acp.ContentBlock{{Type: "text", Text: "go"}})
				if err != nil {
					b.Fatal(err)
				}
				for range turn.Events {
				}
				<-turn.Completion
			}
		})
	}
}

// inProcessB is inProcess for benchmarks.
func inProcessB(b *testing.B, s acptest.Script) (*Host, *acptest.Recorder) {
	b.Helper()
	toAgentR, toAgentW := io.Pipe()
	fromAgentR, fromAgentW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	go acptest.Serve(ctx, s, toAgentR, fromAgentW)
	h, err := Start(context.Background(), AgentSpec{Name: "fake"}, Options{WorkDir: b.TempDir(),
		ClientInfo: acp.Implementation{Name: "openheim", Version: "bench"}, Transport: &Transport{Stdin: toAgentW, Stdout: fromAgentR}})
	if err != nil {
		cancel()
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Close(); cancel() })
	return h, nil
}
