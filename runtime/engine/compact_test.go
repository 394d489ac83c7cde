package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm/llmtest"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
)

// TestCompact: the summary is stored after the history, marked, and the
// next turn sends the history from the summary on.
func TestCompact(t *testing.T) {
	e, srv, store := fakeEngine(t, llmtest.Reply{Text: []string{"old answer"}}, llmtest.Reply{Text: []string{"- the user said hi"}},
		llmtest.Reply{Text: []string{"new answer"}})
	meta, _, err := e.Prompt(context.Background(), Request{Input: []message.Block{message.Text("old question")}})
	if err != nil {
		t.Fatal(err)
	}
	var committed []event.Event
	end, err := e.Compact(context.Background(), Request{SessionID: meta.ID,
		Sink: event.SinkFunc(func(ev event.Event) { committed = append(committed, ev) })})
	if err != nil || end.Err != nil || end.StopReason != "end_turn" {
		t.Fatalf("compact: %+v %v", end, err)
	}
	if len(committed) != 1 || committed[0].Index != 2 || !committed[0].Messages[0].Compaction {
		t.Fatalf("committed: %+v", committed)
	}
	if !strings.Contains(string(srv.Requests()[1].Raw), "old question") {
		t.Error("the summary request lacks the history")
	}
	if _, _, err := e.Prompt(context.Background(), Request{SessionID: meta.ID, Input: []message.Block{message.Text("next")}}); err != nil {
		t.Fatal(err)
	}
	last := string(srv.Requests()[2].Raw)
	if strings.Contains(last, "old question") || !strings.Contains(last, "Summary of the conversation so far") {
		t.Errorf("the turn after compaction sent: %s", last)
	}
	conv, _ := store.Load(meta.ID)
	if len(conv.Messages) != 6 || conv.Messages[0].JoinText() != "old question" {
		t.Errorf("the transcript must stay whole: %+v", conv.Messages)
	}
	// Right after a compaction there is nothing new to summarise... except
	// the turn just taken; a fresh session has nothing at all.
	fresh := session.NewMeta(e.now())
	store.Create(fresh)
	if _, err := e.Compact(context.Background(), Request{SessionID: fresh.ID}); !errors.Is(err, ErrNothingToCompact) {
		t.Errorf("empty session: %v", err)
	}
}
