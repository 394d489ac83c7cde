package engine

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/llm/llmtest"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
	"github.com/openheim/openheim/runtime/tools"
)

// pauseTool stands for a holder that stops mid-turn (a laptop asleep): it
// blocks until resumed, ignoring its context as a stopped process would.
type pauseTool struct{ entered, resume chan struct{} }

func (p *pauseTool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "pause", Description: "waits", Parameters: json.RawMessage(`{"type":"object"}`)}
}
func (p *pauseTool) Kind() string { return "other" }
func (p *pauseTool) Run(context.Context, json.RawMessage) tools.Result {
	close(p.entered)
	<-p.resume
	return tools.Result{Content: "resumed"}
}

type turnResult struct {
	meta session.Meta
	end  event.End
	err  error
}

func leaseRig(t *testing.T) (*llmtest.Server, *session.FileStore, *Engine) {
	srv := llmtest.New()
	t.Cleanup(srv.Close)
	cfg := load(t, "[providers.local]\napi_base = \""+srv.URL()+"\"\ndefault_model = \"m\"\n")
	store, err := session.NewFileStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return srv, store, &Engine{Config: cfg, Store: store}
}

// otherProcess is an engine on the same sessions that sees every lease as
// an hour old, so it takes them over as stale.
func otherProcess(e *Engine, dir string) *Engine {
	return &Engine{Config: e.Config, Store: e.Store, Locker: &session.Locker{Dir: dir, Host: "b",
		Now: func() time.Time { return time.Now().Add(time.Hour) }, Warn: func(string) {}}}
}

func waitTurn(t *testing.T, done <-chan turnResult) turnResult {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(20 * time.Second):
		t.Fatal("the turn did not end")
		return turnResult{}
	}
}

func wantLeaseLost(t *testing.T, r turnResult) {
	t.Helper()
	var lost *session.LeaseLostError
	if r.err != nil || r.end.StopReason != "end_turn" || !errors.As(r.end.Err, &lost) || lost.PID != os.Getpid() || lost.Host != "b" {
		t.Fatalf("turn ended %+v, %v; want the lease error naming pid %d on b", r.end, r.err, os.Getpid())
	}
}

// TestPromptPausedHolderIsFenced: turn A is paused inside a tool while B,
// another process, takes the session over as stale and runs a turn on it.
// When A wakes (B still running), its next save is refused, its turn ends
// with the lease error naming B and makes no further model call; B's turn
// goes on to its end, and nothing of A's is stored after B's first step
// (nor does A's meta replace B's).
func TestPromptPausedHolderIsFenced(t *testing.T) {
	srv, store, a := leaseRig(t)
	a.Locker = &session.Locker{Dir: store.Dir, Host: "a"} // renewals 5 minutes apart: none runs
	b := otherProcess(a, store.Dir)
	m, err := a.NewSession(a.Config.WorkDir, "", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "a1", Name: "pause", Arguments: "{}"}}})
	pauseA := &pauseTool{entered: make(chan struct{}), resume: make(chan struct{})}
	doneA := make(chan turnResult, 1)
	go func() {
		meta, end, err := a.Prompt(context.Background(), Request{SessionID: m.ID,
			Input: []message.Block{message.Text("a's task")}, Tools: ToolSources{Extra: []tools.Tool{pauseA}}})
		doneA <- turnResult{meta, end, err}
	}()
	<-pauseA.entered

	srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "b1", Name: "pause", Arguments: "{}"}}},
		llmtest.Reply{Text: []string{"b's answer"}})
	pauseB := &pauseTool{entered: make(chan struct{}), resume: make(chan struct{})}
	doneB := make(chan turnResult, 1)
	go func() {
		meta, end, err := b.Prompt(context.Background(), Request{SessionID: m.ID,
			Input: []message.Block{message.Text("b's task")}, Tools: ToolSources{Extra: []tools.Tool{pauseB}}})
		doneB <- turnResult{meta, end, err}
	}()
	<-pauseB.entered
	close(pauseA.resume) // A wakes up while B holds the session
	wantLeaseLost(t, waitTurn(t, doneA))
	close(pauseB.resume)
	rb := waitTurn(t, doneB)
	if rb.err != nil || rb.end.Err != nil || rb.end.StopReason != "end_turn" {
		t.Fatalf("b's turn: %+v %v", rb.end, rb.err)
	}

	conv, err := store.Load(m.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, msg := range conv.Messages {
		got = append(got, string(msg.Role)+":"+msg.JoinText())
	}
	want := []string{"user:a's task", "assistant:", "user:b's task", "assistant:", "tool:", "assistant:b's answer"}
	if len(got) != len(want) || got[2] != want[2] || got[4] != want[4] || got[5] != want[5] {
		t.Fatalf("stored %q, want %q", got, want)
	}
	if r := conv.Messages[4].Content; len(r) != 1 || r[0].ToolCallID != "b1" {
		t.Errorf("the tool result after b's call is %+v, want b's", r)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("%d model calls, want 3 (a's first, b's two): a went on after losing its lease", n)
	}
	if cur, _ := store.LoadMeta(m.ID); !cur.UpdatedAt.Equal(rb.meta.UpdatedAt) {
		t.Errorf("meta updated_at %v, b stored %v: a's meta replaced b's", cur.UpdatedAt, rb.meta.UpdatedAt)
	}
}

// TestPromptRenewalStopsTurn: a renewal that finds the lease taken over
// cancels the running turn (here mid-stream, on a model that would never
// finish) at once, and its partial answer is not stored.
func TestPromptRenewalStopsTurn(t *testing.T) {
	srv, store, a := leaseRig(t)
	a.Locker = &session.Locker{Dir: store.Dir, Host: "a", Stale: 60 * time.Millisecond} // renewals every 10 ms
	m, err := a.NewSession(a.Config.WorkDir, "", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	srv.Enqueue(llmtest.Reply{Text: []string{"partial"}, Hang: true})
	done := make(chan turnResult, 1)
	go func() {
		meta, end, err := a.Prompt(context.Background(), Request{SessionID: m.ID, Input: []message.Block{message.Text("a's task")}})
		done <- turnResult{meta, end, err}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for srv.Hanging() < 1 {
		if time.Now().After(deadline) {
			t.Fatal("the stream never started")
		}
		time.Sleep(time.Millisecond)
	}
	lease, err := otherProcess(a, store.Dir).Locker.Acquire(m.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release()
	wantLeaseLost(t, waitTurn(t, done))
	conv, _ := store.Load(m.ID)
	if len(conv.Messages) != 1 || conv.Messages[0].JoinText() != "a's task" {
		t.Fatalf("stored %+v: want only a's input", conv.Messages)
	}
}
