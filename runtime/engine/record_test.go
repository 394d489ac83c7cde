package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm/llmtest"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
)

// TestRecord: recorded items land after the history with their place
// announced, and the next turn sends them, a call without a result given
// one.
func TestRecord(t *testing.T) {
	e, srv, store := fakeEngine(t, llmtest.Reply{Text: []string{"first"}}, llmtest.Reply{Text: []string{"second"}})
	meta, _, err := e.Prompt(context.Background(), Request{Input: []message.Block{message.Text("hello")}})
	if err != nil {
		t.Fatal(err)
	}
	call := message.Message{Role: message.RoleAssistant, Content: []message.Block{
		{Type: message.TypeToolUse, ID: "call_x", Name: "lookup", Arguments: `{"q":"z"}`}}}
	var got []event.Event
	end, err := e.Record(context.Background(), Request{SessionID: meta.ID,
		Sink: event.SinkFunc(func(ev event.Event) { got = append(got, ev) })}, []message.Message{call})
	if err != nil || end.Err != nil {
		t.Fatalf("record: %+v %v", end, err)
	}
	if len(got) != 1 || got[0].Kind != event.Committed || got[0].Index != 2 || got[0].Messages[0].ToolUses()[0].ID != "call_x" {
		t.Fatalf("committed: %+v", got)
	}
	if conv, _ := store.Load(meta.ID); len(conv.Messages) != 3 {
		t.Fatalf("stored: %+v", conv.Messages)
	}
	if _, end, err := e.Prompt(context.Background(), Request{SessionID: meta.ID, Input: []message.Block{message.Text("next")}}); err != nil || end.Err != nil {
		t.Fatalf("the turn after: %v %v", err, end.Err)
	}
	if raw := string(srv.Requests()[1].Raw); !strings.Contains(raw, "call_x") || !strings.Contains(raw, "no result was recorded") {
		t.Errorf("the next turn's request: %s", raw)
	}
	if _, err := e.Record(context.Background(), Request{SessionID: "nope"}, nil); err == nil {
		t.Error("recording into an unknown session")
	}
}

// TestUsageByModel: every model call a session makes (its turns' and its
// compactions') is counted under the model that made it.
func TestUsageByModel(t *testing.T) {
	u := func(in, out int) *llmtest.Usage { return &llmtest.Usage{Prompt: in, Completion: out} }
	e, _, store := fakeEngine(t, llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c", Name: "list_dir", Arguments: `{"path":"."}`}}, Usage: u(10, 2)},
		llmtest.Reply{Text: []string{"a"}, Usage: u(20, 3)}, llmtest.Reply{Text: []string{"- sum"}, Usage: u(5, 1)})
	meta, _, err := e.Prompt(context.Background(), Request{Input: []message.Block{message.Text("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Compact(context.Background(), Request{SessionID: meta.ID}); err != nil {
		t.Fatal(err)
	}
	m, _ := store.LoadMeta(meta.ID)
	if got := m.UsageByModel["local/m"]; got != (message.Usage{InputTokens: 35, OutputTokens: 6}) {
		t.Errorf("usage by model: %+v", m.UsageByModel)
	}
}

// TestSubagentRunIsASession: a delegated task runs as a session of its
// own, a child of the turn's session (Meta.Parent), holding the task and
// the subagent's answer and usage; the parent's stream announces it.
func TestSubagentRunIsASession(t *testing.T) {
	e, _, store := fakeEngine(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "d1", Name: "delegate_task", Arguments: `{"system_prompt":"You count.","task":"count to 3"}`}}},
		llmtest.Reply{Text: []string{"1 2 3"}, Usage: &llmtest.Usage{Prompt: 9, Completion: 3}},
		llmtest.Reply{Text: []string{"it counted"}})
	var started []event.Event
	meta, end, err := e.Prompt(context.Background(), Request{Input: []message.Block{message.Text("delegate")},
		Sink: event.SinkFunc(func(ev event.Event) {
			if ev.Kind == event.SubagentStarted {
				started = append(started, ev)
			}
		})})
	if err != nil || end.Err != nil {
		t.Fatalf("%v %v", err, end.Err)
	}
	if len(started) != 1 || started[0].SessionID != meta.ID || started[0].Child.CallID != "d1" || started[0].Child.Agent != "subagent" {
		t.Fatalf("announced: %+v", started)
	}
	child, err := store.Load(started[0].Child.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if child.Meta.ParentID() != meta.ID || child.Meta.Parent.CallID != "d1" || len(child.Messages) != 2 ||
		child.Messages[1].JoinText() != "1 2 3" || !strings.HasPrefix(deref(child.Meta.Title), "[subagent] count to 3") ||
		child.Meta.UsageByModel["local/m"].OutputTokens != 3 {
		t.Errorf("child: %+v %+v", child.Meta, child.Messages)
	}
	latest, err := session.Latest(store, deref(meta.Cwd))
	if err != nil || latest.ID != meta.ID {
		t.Errorf("the latest session of the cwd is the parent's: %v %v", latest, err)
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
