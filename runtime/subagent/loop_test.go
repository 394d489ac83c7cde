package subagent

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/agent"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/message"
)

// parentTurn runs a parent agent whose registry holds the delegate tool, the
// way the engine wires it, with rec as both streams' sink.
func parentTurn(t *testing.T, opts Options, parent *scripted, rec *recorder) event.End {
	t.Helper()
	opts.Sink = rec
	opts.Tools.Add(NewTool(opts))
	a := &agent.Agent{Provider: parent, Tools: opts.Tools, Model: "parent-model"}
	done := make(chan event.End, 1)
	go func() {
		done <- a.Run(context.Background(), agent.Turn{SessionID: "sess", Sink: rec,
			Input: message.Message{Role: message.RoleUser, Content: []message.Block{message.Text("go")}}})
	}()
	select {
	case end := <-done:
		return end
	case <-time.After(10 * time.Second):
		t.Fatal("the parent turn did not finish")
		return event.End{}
	}
}

func TestEventsForwarded(t *testing.T) {
	sub := &scripted{replies: []reply{sayAndCall("SUBTEXT", use("s1", "a", `{"q":1}`)), say("sub answer")}}
	opts, _, _ := setup(sub)
	parent := &scripted{replies: []reply{
		sayAndCall("", use("p1", Name, `{"task":"T","agent":"researcher"}`)), say("done"),
	}}
	rec := &recorder{}
	end := parentTurn(t, opts, parent, rec)
	if end.StopReason != event.StopEndTurn || end.Err != nil {
		t.Fatalf("parent end = %+v", end)
	}
	if got := parent.reqs()[1].Messages[2].Content[0]; got.ToolCallID != "p1" || got.Content != "sub answer" || got.IsError {
		t.Errorf("the parent got %+v; want the subagent's answer as p1's result", got)
	}
	var prefix string
	var lines []string
	for _, e := range rec.all() {
		if e.SessionID != "sess" {
			t.Errorf("event without the session id: %+v", e)
		}
		if e.Content != nil && (strings.Contains(e.Content.Text, "SUBTEXT") || strings.Contains(e.Content.Text, "sub answer")) {
			t.Errorf("the subagent's text reached the parent's stream: %+v", e)
		}
		if e.Tool == nil {
			continue
		}
		if before, ok := strings.CutSuffix(e.Tool.ID, "/s1"); ok {
			prefix = before
			e.Tool.ID = "<prefix>/s1"
		}
		lines = append(lines, strings.Join([]string{string(e.Kind), e.Tool.ID, e.Tool.Title, e.Tool.Kind, e.Tool.Status, string(e.Tool.RawOutput)}, " "))
	}
	want := []string{
		"tool_call p1 delegate_task think pending ",
		"tool_call_update p1   in_progress ",
		"tool_call <prefix>/s1 [researcher] a read pending ",
		"tool_call_update <prefix>/s1   in_progress ",
		`tool_call_update <prefix>/s1   completed "a ran"`,
		`tool_call_update p1   completed "sub answer"`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("tool events:\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	// Without a CallID source the prefix is a fresh id, never the parent's.
	if !strings.HasPrefix(prefix, "delegate-") || len(prefix) != len("delegate-")+8 {
		t.Errorf("prefix = %q", prefix)
	}
}

// TestDelegatesRunInParallel: two delegate calls in one reply run at once
// (each subagent's first model call waits until both have started) and
// their subagents' calls, both named s1, stay apart in the parent's stream.
func TestDelegatesRunInParallel(t *testing.T) {
	var mu sync.Mutex
	started := 0
	both := make(chan struct{})
	barrier := func(ctx context.Context, req *llm.Request, on func(llm.Delta) error) (*llm.Response, error) {
		task := req.Messages[0].JoinText()
		if len(req.Messages) > 1 {
			return say("answer to "+task)(ctx, req, on)
		}
		mu.Lock()
		if started++; started == 2 {
			close(both)
		}
		mu.Unlock()
		select {
		case <-both:
		case <-time.After(5 * time.Second):
			return nil, errors.New("the other subagent never started: delegate calls ran one after the other")
		}
		return sayAndCall("", use("s1", "a", `{}`))(ctx, req, on)
	}
	opts, _, _ := setup(&scripted{replies: []reply{barrier}})
	parent := &scripted{replies: []reply{
		sayAndCall("", use("p1", Name, `{"task":"T1","system_prompt":"s"}`), use("p2", Name, `{"task":"T2","agent":"researcher"}`)),
		say("done"),
	}}
	rec := &recorder{}
	if end := parentTurn(t, opts, parent, rec); end.Err != nil {
		t.Fatalf("parent end = %+v", end)
	}
	results := parent.reqs()[1].Messages[2].Content
	if len(results) != 2 || results[0].Content != "answer to T1" || results[1].Content != "answer to T2" {
		t.Fatalf("results = %+v", results)
	}
	ids := map[string]string{}
	for _, e := range rec.all() {
		if e.Kind == event.ToolCall && strings.HasSuffix(e.Tool.ID, "/s1") {
			ids[e.Tool.ID] = e.Tool.Title
		}
	}
	titles := []string{}
	for _, title := range ids {
		titles = append(titles, title)
	}
	if len(ids) != 2 || !(titles[0] == "[subagent] a" && titles[1] == "[researcher] a" || titles[1] == "[subagent] a" && titles[0] == "[researcher] a") {
		t.Errorf("forwarded tool calls = %v; want two distinct ids titled [subagent] a and [researcher] a", ids)
	}
}
