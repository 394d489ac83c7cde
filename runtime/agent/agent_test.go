package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/tools"
)

// scripted is an in-process provider that answers from a list of replies.
type scripted struct {
	mu       sync.Mutex
	replies  []func(ctx context.Context, onDelta func(llm.Delta) error) (*llm.Response, error)
	requests []*llm.Request
}

func (s *scripted) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
	s.mu.Lock()
	cp := *req
	cp.Messages = append([]message.Message(nil), req.Messages...)
	s.requests = append(s.requests, &cp)
	if len(s.replies) == 0 {
		s.mu.Unlock()
		return nil, errors.New("no reply scripted")
	}
	f := s.replies[0]
	s.replies = s.replies[1:]
	s.mu.Unlock()
	return f(ctx, onDelta)
}

func text(chunks ...string) func(context.Context, func(llm.Delta) error) (*llm.Response, error) {
	return func(_ context.Context, on func(llm.Delta) error) (*llm.Response, error) {
		for _, c := range chunks {
			if err := on(llm.Delta{Kind: llm.DeltaText, Text: c}); err != nil {
				return nil, err
			}
		}
		return &llm.Response{Content: []message.Block{message.Text(strings.Join(chunks, ""))}, StopReason: event.StopEndTurn,
			Usage: message.Usage{InputTokens: 10, OutputTokens: 5}}, nil
	}
}

func calls(cs ...message.Block) func(context.Context, func(llm.Delta) error) (*llm.Response, error) {
	return func(context.Context, func(llm.Delta) error) (*llm.Response, error) {
		return &llm.Response{Content: cs, StopReason: llm.StopToolUse}, nil
	}
}

func use(id, name, args string) message.Block {
	return message.Block{Type: message.TypeToolUse, ID: id, Name: name, Arguments: args}
}

// fakeTool records calls and answers with a function.
type fakeTool struct {
	name string
	run  func(ctx context.Context, args json.RawMessage) tools.Result
}

func (f *fakeTool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: f.name, Description: "test tool", Parameters: json.RawMessage(`{"type":"object"}`)}
}
func (f *fakeTool) Kind() string { return tools.KindRead }
func (f *fakeTool) Run(ctx context.Context, args json.RawMessage) tools.Result {
	return f.run(ctx, args)
}

type recorder struct {
	mu     sync.Mutex
	events []event.Event
}

func (r *recorder) Emit(e event.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) kinds() []string {
	var out []string
	for _, e := range r.events {
		s := string(e.Kind)
		if e.Tool != nil {
			s += ":" + e.Tool.Status
		}
		out = append(out, s)
	}
	return out
}

func runTurn(t *testing.T, a *Agent, ctx context.Context) (event.End, *recorder, []message.Message) {
	t.Helper()
	rec := &recorder{}
	var saved []message.Message
	end := a.Run(ctx, Turn{SessionID: "s1", Input: message.Message{Role: message.RoleUser, Content: []message.Block{message.Text("hi")}},
		Sink: rec, Persist: func(m ...message.Message) error { saved = append(saved, m...); return nil }})
	return end, rec, saved
}

func TestPlainAnswer(t *testing.T) {
	p := &scripted{replies: []func(context.Context, func(llm.Delta) error) (*llm.Response, error){text("Hel", "lo")}}
	end, rec, saved := runTurn(t, &Agent{Provider: p}, context.Background())
	if end.StopReason != event.StopEndTurn || end.Err != nil || end.Iterations != 1 {
		t.Fatalf("end = %+v", end)
	}
	if end.Usage.InputTokens != 10 {
		t.Errorf("usage not recorded: %+v", end.Usage)
	}
	got := strings.Join(rec.kinds(), ",")
	if got != "agent_message_chunk,agent_message_chunk,usage_update" {
		t.Errorf("events = %s", got)
	}
	if len(saved) != 2 || saved[1].JoinText() != "Hello" {
		t.Errorf("saved = %+v", saved)
	}
}

func TestToolsRunConcurrentlyResultsInOrder(t *testing.T) {
	var wg sync.WaitGroup
	wg.Add(2)
	slow := &fakeTool{name: "slow", run: func(ctx context.Context, _ json.RawMessage) tools.Result {
		wg.Done()
		wg.Wait() // both tools must be running at once or this deadlocks
		return tools.Result{Content: "slow done"}
	}}
	fast := &fakeTool{name: "fast", run: func(ctx context.Context, _ json.RawMessage) tools.Result {
		wg.Done()
		return tools.Result{Content: "fast done"}
	}}
	p := &scripted{replies: []func(context.Context, func(llm.Delta) error) (*llm.Response, error){
		calls(use("c1", "slow", `{}`), use("c2", "fast", `{}`)), text("ok")}}
	a := &Agent{Provider: p, Tools: tools.NewRegistry(slow, fast)}
	done := make(chan struct{})
	var saved []message.Message
	var end event.End
	go func() {
		end, _, saved = runTurn(t, a, context.Background())
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("tools did not run concurrently")
	}
	if end.StopReason != event.StopEndTurn || end.Iterations != 2 {
		t.Fatalf("end = %+v", end)
	}
	res := saved[2]
	if res.Role != message.RoleTool || res.Content[0].ToolCallID != "c1" || res.Content[1].ToolCallID != "c2" {
		t.Fatalf("results out of order: %+v", res)
	}
	if len(p.requests[1].Messages) != 3 {
		t.Errorf("second request should carry user, assistant, tool; got %d", len(p.requests[1].Messages))
	}
}

func TestBadArgumentsAndUnknownTool(t *testing.T) {
	echo := &fakeTool{name: "echo", run: func(_ context.Context, a json.RawMessage) tools.Result { return tools.Result{Content: string(a)} }}
	p := &scripted{replies: []func(context.Context, func(llm.Delta) error) (*llm.Response, error){
		calls(use("a", "echo", `[1,2]`), use("b", "echo", `not json`), use("c", "nope", `{}`), use("d", "echo", ``)), text("ok")}}
	_, rec, saved := runTurn(t, &Agent{Provider: p, Tools: tools.NewRegistry(echo)}, context.Background())
	res := saved[2].Content
	for i, want := range []string{"Invalid arguments for echo", "Invalid arguments for echo", "Unknown tool: nope", "{}"} {
		if !strings.Contains(res[i].Content, want) {
			t.Errorf("result %d = %q, want %q", i, res[i].Content, want)
		}
	}
	if !res[0].IsError || !res[2].IsError || res[3].IsError {
		t.Errorf("is_error flags wrong: %+v", res)
	}
	failed := 0
	for _, e := range rec.events {
		if e.Kind == event.ToolCallUpdate && e.Tool.Status == event.StatusFailed {
			failed++
		}
	}
	if failed != 3 {
		t.Errorf("failed updates = %d, want 3", failed)
	}
}

func TestResultCapped(t *testing.T) {
	big := &fakeTool{name: "big", run: func(context.Context, json.RawMessage) tools.Result {
		return tools.Result{Content: strings.Repeat("é", 100_000)} // 200,000 bytes
	}}
	p := &scripted{replies: []func(context.Context, func(llm.Delta) error) (*llm.Response, error){calls(use("a", "big", `{}`)), text("ok")}}
	_, _, saved := runTurn(t, &Agent{Provider: p, Tools: tools.NewRegistry(big)}, context.Background())
	got := saved[2].Content[0].Content
	if len(got) > DefaultMaxResultBytes+200 || !strings.Contains(got, "output truncated: 200000 bytes total") {
		t.Fatalf("len %d, tail %q", len(got), got[len(got)-80:])
	}
	if !strings.HasPrefix(got, "é") || strings.Contains(got, "\uFFFD") {
		t.Error("truncation split a character")
	}
}

func TestMaxTurnRequests(t *testing.T) {
	echo := &fakeTool{name: "echo", run: func(context.Context, json.RawMessage) tools.Result { return tools.Result{Content: "x"} }}
	var replies []func(context.Context, func(llm.Delta) error) (*llm.Response, error)
	for range 5 {
		replies = append(replies, calls(use("a", "echo", `{}`)))
	}
	p := &scripted{replies: replies}
	end, _, _ := runTurn(t, &Agent{Provider: p, Tools: tools.NewRegistry(echo), MaxIterations: 3}, context.Background())
	if end.StopReason != event.StopMaxTurnRequests || end.Iterations != 3 || len(p.requests) != 3 {
		t.Fatalf("end = %+v, requests = %d", end, len(p.requests))
	}
}

func TestCancelDuringToolKeepsWork(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	block := &fakeTool{name: "block", run: func(ctx context.Context, _ json.RawMessage) tools.Result {
		cancel()
		<-ctx.Done()
		return tools.Result{Content: "killed", IsError: true}
	}}
	p := &scripted{replies: []func(context.Context, func(llm.Delta) error) (*llm.Response, error){calls(use("a", "block", `{}`))}}
	end, _, saved := runTurn(t, &Agent{Provider: p, Tools: tools.NewRegistry(block)}, ctx)
	if end.StopReason != event.StopCancelled || end.Err != nil {
		t.Fatalf("end = %+v", end)
	}
	if len(saved) != 3 || saved[2].Content[0].Content != CancelledResult {
		t.Fatalf("saved = %+v", saved)
	}
}

func TestCancelMidStreamKeepsText(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	p := &scripted{replies: []func(context.Context, func(llm.Delta) error) (*llm.Response, error){
		func(ctx context.Context, on func(llm.Delta) error) (*llm.Response, error) {
			on(llm.Delta{Text: "partial "})
			cancel()
			return nil, ctx.Err()
		}}}
	end, _, saved := runTurn(t, &Agent{Provider: p}, ctx)
	if end.StopReason != event.StopCancelled {
		t.Fatalf("end = %+v", end)
	}
	if len(saved) != 2 || saved[1].JoinText() != "partial " {
		t.Fatalf("saved = %+v", saved)
	}
}

func TestProviderErrorEndsTurn(t *testing.T) {
	p := &scripted{}
	end, _, _ := runTurn(t, &Agent{Provider: p}, context.Background())
	if end.Err == nil || end.StopReason != event.StopEndTurn {
		t.Fatalf("end = %+v", end)
	}
}

func TestMaxTokensWithCallsDoesNotRunThem(t *testing.T) {
	ran := false
	tool := &fakeTool{name: "t", run: func(context.Context, json.RawMessage) tools.Result { ran = true; return tools.Result{} }}
	p := &scripted{replies: []func(context.Context, func(llm.Delta) error) (*llm.Response, error){
		func(context.Context, func(llm.Delta) error) (*llm.Response, error) {
			return &llm.Response{Content: []message.Block{use("a", "t", `{"x":`)}, StopReason: event.StopMaxTokens}, nil
		}}}
	end, _, saved := runTurn(t, &Agent{Provider: p, Tools: tools.NewRegistry(tool)}, context.Background())
	if ran || end.StopReason != event.StopMaxTokens {
		t.Fatalf("ran=%v end=%+v", ran, end)
	}
	if len(saved) != 3 || !saved[2].Content[0].IsError {
		t.Fatalf("cut-off call needs an error result: %+v", saved)
	}
}

func TestRepairHistory(t *testing.T) {
	h := []message.Message{
		{Role: message.RoleUser, Content: []message.Block{message.Text("x")}},
		{Role: message.RoleAssistant, Content: []message.Block{use("a", "t", "{}"), use("b", "t", "{}")}},
		{Role: message.RoleTool, Content: []message.Block{message.ToolResult("a", "t", "ok", false)}},
		{Role: message.RoleAssistant, Content: []message.Block{use("c", "t", "{}")}},
	}
	got := repairHistory(h)
	if len(got) != 5 {
		t.Fatalf("len = %d", len(got))
	}
	if len(got[2].Content) != 2 || got[2].Content[1].ToolCallID != "b" || !got[2].Content[1].IsError {
		t.Errorf("missing result b not filled: %+v", got[2])
	}
	if got[4].Role != message.RoleTool || got[4].Content[0].ToolCallID != "c" {
		t.Errorf("missing result c not filled: %+v", got[4])
	}
	if len(h[2].Content) != 1 {
		t.Error("repair mutated the stored history")
	}
}

func TestToolPanicIsAnError(t *testing.T) {
	bad := &fakeTool{name: "bad", run: func(context.Context, json.RawMessage) tools.Result { panic("boom") }}
	p := &scripted{replies: []func(context.Context, func(llm.Delta) error) (*llm.Response, error){calls(use("a", "bad", `{}`)), text("ok")}}
	_, _, saved := runTurn(t, &Agent{Provider: p, Tools: tools.NewRegistry(bad)}, context.Background())
	if r := saved[2].Content[0]; !r.IsError || !strings.Contains(r.Content, "boom") {
		t.Fatalf("result = %+v", r)
	}
}

// TestToolImagesReachTheModel: images a tool returns follow the tool
// results as a user message, stored and sent with the next request.
func TestToolImagesReachTheModel(t *testing.T) {
	png := message.Block{Type: message.TypeImage, Data: "iVBORw0KGgo=", MimeType: "image/png"}
	shot := &fakeTool{name: "screenshot", run: func(context.Context, json.RawMessage) tools.Result {
		return tools.Result{Content: "captured", Images: []message.Block{png}}
	}}
	p := &scripted{replies: []func(context.Context, func(llm.Delta) error) (*llm.Response, error){
		calls(use("c1", "screenshot", `{}`)), text("I see it."),
	}}
	end, _, saved := runTurn(t, &Agent{Provider: p, Tools: tools.NewRegistry(shot)}, context.Background())
	if end.Err != nil || end.StopReason != event.StopEndTurn {
		t.Fatalf("end = %+v", end)
	}
	// user, assistant(tool_use), tool, user(images), assistant
	if len(saved) != 5 || saved[3].Role != message.RoleUser || len(saved[3].Content) != 2 || saved[3].Content[1] != png {
		t.Fatalf("saved = %+v", saved)
	}
	if !strings.Contains(saved[2].Content[0].Content, "captured") || !strings.Contains(saved[3].Content[0].Text, "c1 (screenshot)") {
		t.Errorf("tool result %q, image caption %q", saved[2].Content[0].Content, saved[3].Content[0].Text)
	}
	second := p.requests[1].Messages
	if last := second[len(second)-1]; last.Role != message.RoleUser || last.Content[1] != png {
		t.Errorf("the second request does not end with the image: %+v", last)
	}
}

// TestStreamNotices: what the provider tells beside text reaches the
// stream: a tool call as the model begins it (its place in the reply, the
// tool's kind), a retry, thinking that is a summary; the turn's End totals
// the usage of every call while Usage is the last one's.
func TestStreamNotices(t *testing.T) {
	p := &scripted{replies: []func(context.Context, func(llm.Delta) error) (*llm.Response, error){
		func(_ context.Context, on func(llm.Delta) error) (*llm.Response, error) {
			on(llm.Delta{Kind: llm.DeltaRetry, Retry: &llm.RetryNotice{Attempt: 1, MaxRetries: 3, Delay: time.Second, Err: "HTTP 503"}})
			on(llm.Delta{Kind: llm.DeltaThinking, Text: "plan", Summary: true})
			on(llm.ToolCallDelta(0, "c1", "echo"))
			return &llm.Response{Content: []message.Block{use("c1", "echo", `{}`)}, StopReason: llm.StopToolUse,
				Usage: message.Usage{InputTokens: 7, OutputTokens: 3}}, nil
		},
		text("done"),
	}}
	echo := &fakeTool{name: "echo", run: func(context.Context, json.RawMessage) tools.Result { return tools.Result{Content: "ok"} }}
	end, rec, _ := runTurn(t, &Agent{Provider: p, Tools: tools.NewRegistry(echo)}, context.Background())
	var retry, summary, started bool
	for _, e := range rec.events {
		switch {
		case e.Kind == event.Retry:
			retry = e.Retry != nil && e.Retry.Attempt == 1 && e.Retry.Delay == time.Second && e.Retry.Err == "HTTP 503"
		case e.Kind == event.AgentThoughtChunk:
			summary = e.Summary
		case e.Kind == event.ToolCallStreaming:
			started = e.Index == 0 && e.Tool.ID == "c1" && e.Tool.Title == "echo" && e.Tool.Kind == tools.KindRead
		}
	}
	if !retry || !summary || !started {
		t.Errorf("retry %v, summary %v, call started %v: %v", retry, summary, started, rec.kinds())
	}
	if end.Usage != (message.Usage{InputTokens: 10, OutputTokens: 5}) || end.Total != (message.Usage{InputTokens: 17, OutputTokens: 8}) {
		t.Errorf("usage %+v, total %+v", end.Usage, end.Total)
	}
}
