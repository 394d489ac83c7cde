package subagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/permission"
	"github.com/openheim/openheim/runtime/tools"
)

type reply func(ctx context.Context, req *llm.Request, on func(llm.Delta) error) (*llm.Response, error)

// scripted is an in-process provider answering from a list of replies;
// after the list, it repeats the last one.
type scripted struct {
	mu       sync.Mutex
	replies  []reply
	requests []*llm.Request
}

func (s *scripted) Stream(ctx context.Context, req *llm.Request, on func(llm.Delta) error) (*llm.Response, error) {
	s.mu.Lock()
	cp := *req
	cp.Messages = append([]message.Message(nil), req.Messages...)
	s.requests = append(s.requests, &cp)
	f := s.replies[0]
	if len(s.replies) > 1 {
		s.replies = s.replies[1:]
	}
	s.mu.Unlock()
	return f(ctx, req, on)
}

func (s *scripted) reqs() []*llm.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*llm.Request(nil), s.requests...)
}

func say(text string) reply {
	return func(_ context.Context, _ *llm.Request, on func(llm.Delta) error) (*llm.Response, error) {
		if err := on(llm.Delta{Kind: llm.DeltaText, Text: text}); err != nil {
			return nil, err
		}
		return &llm.Response{Content: []message.Block{message.Text(text)}, StopReason: event.StopEndTurn}, nil
	}
}

// sayAndCall streams text, then asks for tool calls.
func sayAndCall(text string, cs ...message.Block) reply {
	return func(_ context.Context, _ *llm.Request, on func(llm.Delta) error) (*llm.Response, error) {
		content := cs
		if text != "" {
			_ = on(llm.Delta{Kind: llm.DeltaText, Text: text})
			content = append([]message.Block{message.Text(text)}, cs...)
		}
		return &llm.Response{Content: content, StopReason: llm.StopToolUse}, nil
	}
}

func use(id, name, args string) message.Block {
	return message.Block{Type: message.TypeToolUse, ID: id, Name: name, Arguments: args}
}

type fakeTool struct {
	name string
	run  func(ctx context.Context) tools.Result
}

func (f *fakeTool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: f.name, Description: "test", Parameters: json.RawMessage(`{"type":"object"}`)}
}
func (f *fakeTool) Kind() string { return tools.KindRead }
func (f *fakeTool) Run(ctx context.Context, _ json.RawMessage) tools.Result {
	if f.run == nil {
		return tools.Result{Content: f.name + " ran"}
	}
	return f.run(ctx)
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

func (r *recorder) all() []event.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]event.Event(nil), r.events...)
}

var profiles = map[string]Profile{
	"researcher": {Name: "researcher", Description: "Finds things", System: "You research.", Provider: "prov", Model: "m1", Tools: []string{"a"}, MaxIterations: 5},
	"checker":    {Name: "checker", System: "You check."},
}

// setup returns options over a parent registry holding tools a, b and the
// delegate tool itself, every subagent streaming from sub.
func setup(sub *scripted) (Options, *tools.Registry, *[][2]string) {
	reg := tools.NewRegistry(&fakeTool{name: "a"}, &fakeTool{name: "b"})
	var mu sync.Mutex
	resolved := &[][2]string{}
	opts := Options{
		Profiles: profiles, Tools: reg, SessionID: "sess",
		ParentModel: Model{Name: "parent-model", MaxTokens: 100},
		Provider: func(provider, model string) (llm.Provider, Model, error) {
			mu.Lock()
			*resolved = append(*resolved, [2]string{provider, model})
			mu.Unlock()
			if provider == "broken" {
				return nil, Model{}, errors.New(`provider "broken" is not configured`)
			}
			if model == "" {
				return sub, Model{}, nil
			}
			return sub, Model{Name: model + "-resolved", MaxTokens: 7, ContextWindow: 1000}, nil
		},
	}
	return opts, reg, resolved
}

func run(t *testing.T, tl tools.Tool, ctx context.Context, args string) tools.Result {
	t.Helper()
	return tl.Run(ctx, json.RawMessage(args))
}

func specNames(specs []llm.ToolSpec) string {
	var out []string
	for _, s := range specs {
		out = append(out, s.Name)
	}
	return strings.Join(out, ",")
}

func TestArgumentErrors(t *testing.T) {
	cases := []struct{ args, want string }{
		{`{"task":"x"}`, "give exactly one of agent (a configured subagent) or system_prompt"},
		{`{"task":"x","agent":"researcher","system_prompt":"y"}`, "give exactly one of agent or system_prompt, not both"},
		{`{"task":"x","agent":"nobody"}`, `unknown agent "nobody"; available: checker, researcher`},
		{`{"agent":"researcher"}`, "task is required"},
		{`{"task":"x","agent":"researcher","model":"m"}`, `tools, model and provider are for inline subagents only: agent "researcher"`},
		{`{"task":"x","system_prompt":"y","tools":["a","nope","zip"]}`, "unknown tool(s) for the inline subagent: nope, zip; available: a, b"},
		{`{"task":"x","system_prompt":"y","tools":["delegate_task"]}`, "delegate_task cannot be given to a subagent"},
		{`{"task":"x","system_prompt":"y","max_iterations":0}`, "max_iterations must be a positive integer"},
		{`{"task":"x","system_prompt":"y","max_iterations":2.5}`, "max_iterations must be a positive integer"},
		{`{"task":"x","system_prompt":"y","tools":7}`, "tools must be a list of tool names"},
		{`["x"]`, "invalid arguments"},
		{`{"task":"x","system_prompt":"y","provider":"broken"}`, `the inline subagent: provider "broken" is not configured`},
	}
	for _, c := range cases {
		sub := &scripted{replies: []reply{say("never")}}
		opts, reg, _ := setup(sub)
		reg.Add(NewTool(opts))
		tl, _ := reg.Get(Name)
		res := run(t, tl, context.Background(), c.args)
		if !res.IsError || !strings.Contains(res.Content, c.want) {
			t.Errorf("%s:\n got %+v\nwant error containing %q", c.args, res, c.want)
		}
		if len(sub.reqs()) != 0 {
			t.Errorf("%s: the subagent ran", c.args)
		}
	}
	opts, _, _ := setup(&scripted{replies: []reply{say("never")}})
	opts.Profiles = nil
	res := run(t, NewTool(opts), context.Background(), `{"task":"x","agent":"researcher"}`)
	if !strings.Contains(res.Content, "no subagents are configured; define one inline with system_prompt") {
		t.Errorf("no profiles: %+v", res)
	}
}

func TestProfileSubagent(t *testing.T) {
	ran := false
	sub := &scripted{replies: []reply{sayAndCall("Let me look.", use("s1", "a", `{}`)), say("The answer.")}}
	opts, reg, resolved := setup(sub)
	reg.Add(&fakeTool{name: "a", run: func(context.Context) tools.Result { ran = true; return tools.Result{Content: "found"} }})
	res := run(t, NewTool(opts), context.Background(), `{"task":"Find X.","agent":"researcher","max_iterations":"3"}`)
	if res.IsError || res.Content != "The answer." {
		t.Fatalf("result = %+v; want the last reply only", res)
	}
	if !ran || fmt.Sprint(*resolved) != "[[prov m1]]" {
		t.Errorf("tool ran %v, provider resolved %v", ran, *resolved)
	}
	reqs := sub.reqs()
	r := reqs[0]
	if r.Model != "m1-resolved" || r.MaxTokens != 7 || r.System != "You research." || specNames(r.Tools) != "a" {
		t.Errorf("request = model %q max %d system %q tools %s", r.Model, r.MaxTokens, r.System, specNames(r.Tools))
	}
	if len(r.Messages) != 1 || r.Messages[0].Role != message.RoleUser || r.Messages[0].JoinText() != "Find X." {
		t.Errorf("the subagent must start from the task alone: %+v", r.Messages)
	}
}

func TestInlineSubagentTools(t *testing.T) {
	cases := []struct{ args, offered, resolved, model string }{
		// No tools given: all the parent's but delegate_task; the parent's model.
		{`{"task":"t","system_prompt":"s"}`, "a,b", "[[ ]]", "parent-model"},
		{`{"task":"t","system_prompt":"s","tools":["b"],"model":"m2","provider":"p2"}`, "b", "[[p2 m2]]", "m2-resolved"},
		{`{"task":"t","system_prompt":"s","tools":"b, a"}`, "a,b", "[[ ]]", "parent-model"},
		{`{"task":"t","system_prompt":"s","tools":[]}`, "", "[[ ]]", "parent-model"},
	}
	for _, c := range cases {
		sub := &scripted{replies: []reply{say("ok")}}
		opts, reg, resolved := setup(sub)
		reg.Add(NewTool(opts)) // the parent offers delegate_task; the subagent must not
		tl, _ := reg.Get(Name)
		if res := run(t, tl, context.Background(), c.args); res.IsError || res.Content != "ok" {
			t.Fatalf("%s: %+v", c.args, res)
		}
		r := sub.reqs()[0]
		if specNames(r.Tools) != c.offered || fmt.Sprint(*resolved) != c.resolved || r.Model != c.model || r.System != "s" {
			t.Errorf("%s: offered %q resolved %v model %q system %q", c.args, specNames(r.Tools), *resolved, r.Model, r.System)
		}
	}
}

func TestIterationsCap(t *testing.T) {
	cases := []struct {
		parentCap int
		args      string
		want      int
	}{
		{3, `{"task":"t","system_prompt":"s","max_iterations":5}`, 3},
		{0, `{"task":"t","system_prompt":"s","max_iterations":4}`, 4},
		{0, `{"task":"t","system_prompt":"s"}`, DefaultMaxIterations},
		{10, `{"task":"t","agent":"researcher"}`, 5},
		{4, `{"task":"t","agent":"researcher"}`, 4},
		{10, `{"task":"t","agent":"researcher","max_iterations":2}`, 2},
		{1, `{"task":"t","agent":"checker"}`, 1},
	}
	for _, c := range cases {
		sub := &scripted{replies: []reply{sayAndCall("still working", use("s1", "a", `{}`))}}
		opts, _, _ := setup(sub)
		opts.MaxIterations = c.parentCap
		res := run(t, NewTool(opts), context.Background(), c.args)
		calls := "calls"
		if c.want == 1 {
			calls = "call"
		}
		want := fmt.Sprintf("still working\n\n[subagent stopped early: max_turn_requests after %d model %s; the answer may be incomplete]", c.want, calls)
		if got := len(sub.reqs()); got != c.want || res.IsError || res.Content != want {
			t.Errorf("cap %d %s: %d model calls, result %+v; want %d calls, %q", c.parentCap, c.args, got, res, c.want, want)
		}
	}
}

func TestStoppedEarlyAndFailures(t *testing.T) {
	cut := func(_ context.Context, _ *llm.Request, on func(llm.Delta) error) (*llm.Response, error) {
		_ = on(llm.Delta{Kind: llm.DeltaText, Text: "partial"})
		return &llm.Response{Content: []message.Block{message.Text("partial")}, StopReason: event.StopMaxTokens}, nil
	}
	fail := func(context.Context, *llm.Request, func(llm.Delta) error) (*llm.Response, error) {
		return nil, errors.New("anthropic: 529 overloaded")
	}
	cases := []struct {
		r       reply
		want    string
		isError bool
	}{
		{cut, "partial\n\n[subagent stopped early: max_tokens after 1 model call; the answer may be incomplete]", false},
		{fail, "subagent checker failed: anthropic: 529 overloaded", true},
		{say(""), "(the subagent gave no answer)", false},
	}
	for _, c := range cases {
		opts, _, _ := setup(&scripted{replies: []reply{c.r}})
		res := run(t, NewTool(opts), context.Background(), `{"task":"t","agent":"checker"}`)
		if res.Content != c.want || res.IsError != c.isError {
			t.Errorf("result = %+v; want %q (error %v)", res, c.want, c.isError)
		}
	}
}

func TestCancelStopsSubagent(t *testing.T) {
	started := make(chan struct{})
	var sawCancel bool
	sub := &scripted{replies: []reply{sayAndCall("", use("s1", "slow", `{}`)), say("never")}}
	opts, reg, _ := setup(sub)
	reg.Add(&fakeTool{name: "slow", run: func(ctx context.Context) tools.Result {
		close(started)
		select {
		case <-ctx.Done():
			sawCancel = true
		case <-time.After(5 * time.Second):
		}
		return tools.Result{Content: "slow done"}
	}})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	res := run(t, NewTool(opts), ctx, `{"task":"t","system_prompt":"s"}`)
	if !sawCancel || len(sub.reqs()) != 1 {
		t.Fatalf("the subagent's tool saw the cancel: %v; model calls %d", sawCancel, len(sub.reqs()))
	}
	if !strings.Contains(res.Content, "[subagent stopped early: cancelled after 1 model call; the answer may be incomplete]") {
		t.Errorf("result = %+v", res)
	}
}

type callIDKey struct{}

func TestPermitConsulted(t *testing.T) {
	sub := &scripted{replies: []reply{sayAndCall("", use("s1", "a", `{}`), use("s2", "b", `{"x":1}`)), say("done")}}
	opts, reg, _ := setup(sub)
	bRan := false
	reg.Add(&fakeTool{name: "b", run: func(context.Context) tools.Result { bRan = true; return tools.Result{} }})
	var mu sync.Mutex
	var asked []string
	opts.Permit = func(_ context.Context, call message.Block, kind string) bool {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, call.ID+" "+call.Name+" "+kind+" "+call.Arguments)
		return call.Name != "b"
	}
	opts.CallID = func(ctx context.Context) string { id, _ := ctx.Value(callIDKey{}).(string); return id }
	ctx := context.WithValue(context.Background(), callIDKey{}, "p1")
	if res := run(t, NewTool(opts), ctx, `{"task":"t","system_prompt":"s"}`); res.Content != "done" {
		t.Fatalf("result = %+v", res)
	}
	got := strings.Join(asked, "|")
	if got != "p1/s1 a read {}|p1/s2 b read {\"x\":1}" && got != "p1/s2 b read {\"x\":1}|p1/s1 a read {}" {
		t.Errorf("permit asked %q", got)
	}
	if bRan {
		t.Error("a refused call ran")
	}
	results := sub.reqs()[1].Messages[2].Content
	if len(results) != 2 || results[0].Content != "a ran" || results[1].Content != permission.DeniedResult {
		t.Errorf("tool results = %+v", results)
	}
}
