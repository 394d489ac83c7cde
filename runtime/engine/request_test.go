package engine

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm/llmtest"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
)

// TestPromptCommitsInboxAndProfile covers what the sessions API relies on:
// Committed events name each stored message's position; messages that
// arrive during a turn are taken in at the next checkpoint; an agent
// profile's identity, tool list and iteration cap apply.
func TestPromptCommitsInboxAndProfile(t *testing.T) {
	e, srv, store := fakeEngine(t, llmtest.Reply{Text: []string{"first"}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "list_dir", Arguments: `{"path":"."}`}}},
		llmtest.Reply{Text: []string{"done"}})
	meta, _, err := e.Prompt(context.Background(), Request{Input: []message.Block{message.Text("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var commits []event.Event
	inbox := [][]message.Message{{{Content: []message.Block{message.Text("also this")}}}}
	_, end, err := e.Prompt(context.Background(), Request{SessionID: meta.ID, Input: []message.Block{message.Text("list")},
		Identity: "You are the lister.", Filter: ToolFilter{Only: []string{"list_dir"}}, MaxIterations: 5,
		Inbox: func() []message.Message {
			mu.Lock()
			defer mu.Unlock()
			if len(inbox) == 0 {
				return nil
			}
			m := inbox[0]
			inbox = inbox[1:]
			return m
		},
		Sink: event.SinkFunc(func(ev event.Event) {
			if ev.Kind == event.Committed {
				mu.Lock()
				commits = append(commits, ev)
				mu.Unlock()
			}
		})})
	if err != nil || end.StopReason != "end_turn" {
		t.Fatalf("%+v %v", end, err)
	}
	conv, _ := store.Load(meta.ID)
	// hi, first | list, tool call, tool result, also this, done
	if len(conv.Messages) != 7 {
		t.Fatalf("stored %d messages: %+v", len(conv.Messages), conv.Messages)
	}
	var got []string
	for _, c := range commits {
		for i, m := range c.Messages {
			// Each commit's index is where its messages are in the store.
			if !slices.EqualFunc(conv.Messages[c.Index+i].Content, m.Content, func(a, b message.Block) bool { return a.Text == b.Text && a.Type == b.Type }) {
				t.Errorf("commit at %d does not match the store", c.Index+i)
			}
			got = append(got, string(m.Role))
		}
	}
	if strings.Join(got, ",") != "user,assistant,tool,user,assistant" || commits[0].Index != 2 {
		t.Errorf("commits %v starting at %d", got, commits[0].Index)
	}
	if conv.Messages[5].Role != message.RoleUser || conv.Messages[5].JoinText() != "also this" {
		t.Errorf("inbox message stored as %+v", conv.Messages[5])
	}
	reqs := srv.Requests()
	var body struct {
		Messages []struct{ Role, Content any }
		Tools    []struct{ Function struct{ Name string } }
	}
	json.Unmarshal(reqs[2].Raw, &body)
	if len(body.Tools) != 1 || body.Tools[0].Function.Name != "list_dir" {
		t.Errorf("tools offered: %+v", body.Tools)
	}
	if sys, _ := body.Messages[0].Content.(string); !strings.Contains(sys, "You are the lister.") {
		t.Errorf("system message: %v", body.Messages[0])
	}
	if last := body.Messages[len(body.Messages)-1]; last.Role != "user" || last.Content != "also this" {
		t.Errorf("the inbox message was not sent last: %+v", last)
	}
}

// fakeEngine is an engine on a fake OpenAI-compatible server scripted with
// replies, storing sessions in a temporary directory.
func fakeEngine(t *testing.T, replies ...llmtest.Reply) (*Engine, *llmtest.Server, *session.FileStore) {
	t.Helper()
	srv := llmtest.New()
	t.Cleanup(srv.Close)
	srv.Enqueue(replies...)
	cfg := load(t, `
[providers.local]
api_base = "`+srv.URL()+`"
default_model = "m"
`)
	store, err := session.NewFileStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &Engine{Config: cfg, Store: store}, srv, store
}
