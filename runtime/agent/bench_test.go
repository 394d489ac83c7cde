package agent

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/tools"
)

// chunky streams n text chunks per call without any I/O, so the benchmark
// measures the loop's own overhead per chunk.
type chunky struct{ n int }

func (c chunky) Stream(_ context.Context, _ *llm.Request, on func(llm.Delta) error) (*llm.Response, error) {
	for i := 0; i < c.n; i++ {
		if err := on(llm.Delta{Text: "token "}); err != nil {
			return nil, err
		}
	}
	return &llm.Response{Content: []message.Block{message.Text("done")}, StopReason: event.StopEndTurn}, nil
}

func BenchmarkLoopPerChunk(b *testing.B) {
	const chunks = 1000
	a := &Agent{Provider: chunky{chunks}}
	q := event.NewQueue(event.Discard, 4096)
	defer q.Close()
	in := message.Message{Role: message.RoleUser, Content: []message.Block{message.Text("hi")}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		a.Run(context.Background(), Turn{SessionID: "s", Input: in, Sink: q})
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*chunks), "ns/chunk")
}

// callsThenAnswer asks for n no-op tool calls, then answers.
type callsThenAnswer struct{ n int }

func (c callsThenAnswer) Stream(_ context.Context, req *llm.Request, _ func(llm.Delta) error) (*llm.Response, error) {
	if req.Messages[len(req.Messages)-1].Role == message.RoleTool {
		return &llm.Response{Content: []message.Block{message.Text("done")}, StopReason: event.StopEndTurn}, nil
	}
	var cs []message.Block
	for i := 0; i < c.n; i++ {
		cs = append(cs, use("c", "noop", `{"path":"x"}`))
	}
	return &llm.Response{Content: cs, StopReason: llm.StopToolUse}, nil
}

func BenchmarkLoopPerToolCall(b *testing.B) {
	const n = 10
	noop := &fakeTool{name: "noop", run: func(context.Context, json.RawMessage) tools.Result { return tools.Result{Content: "ok"} }}
	a := &Agent{Provider: callsThenAnswer{n}, Tools: tools.NewRegistry(noop)}
	q := event.NewQueue(event.Discard, 4096)
	defer q.Close()
	in := message.Message{Role: message.RoleUser, Content: []message.Block{message.Text("hi")}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		a.Run(context.Background(), Turn{SessionID: "s", Input: in, Sink: q})
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/toolcall")
}
