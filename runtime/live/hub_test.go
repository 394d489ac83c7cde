package live

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
)

// recorder is a subscriber that keeps what it sees.
type recorder struct {
	mu     sync.Mutex
	events []event.Event
	on     func(event.Event) // called under no lock, before recording
}

func (r *recorder) Emit(ev event.Event) {
	if r.on != nil {
		r.on(ev)
	}
	r.mu.Lock()
	r.events = append(r.events, ev)
	r.mu.Unlock()
}

func (r *recorder) kinds() []event.Kind {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []event.Kind
	for _, e := range r.events {
		out = append(out, e.Kind)
	}
	return out
}

func text(s string) []message.Block { return []message.Block{message.Text(s)} }

// say is a turn that emits one chunk and ends.
func say(s string) RunFunc {
	return func(_ context.Context, sink event.Sink) (event.End, error) {
		sink.Emit(event.Text("s", event.AgentMessageChunk, s))
		return event.End{StopReason: "end_turn"}, nil
	}
}

func wait[T any](t *testing.T, c <-chan T) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("timed out")
	}
	var zero T
	return zero
}

// TestNextTurnStartsAtTurnEnd: the turn is unregistered before its
// TurnEnd is published, so a watcher that sees TurnEnd starts the next
// turn at once (no polling, no "busy"), and that turn's TurnStart reaches
// every watcher after the previous TurnEnd.
func TestNextTurnStartsAtTurnEnd(t *testing.T) {
	h := NewHub(context.Background(), nil)
	defer h.Stop()
	second := make(chan error, 1)
	var outcome <-chan Outcome
	starter := &recorder{}
	starter.on = func(ev event.Event) {
		if ev.Kind != event.TurnEnd || ev.End.StopReason != "first" {
			return
		}
		if h.IsRunning("s") {
			t.Error("the turn is still registered when its TurnEnd is published")
		}
		go func() { // a subscriber never runs a turn on the delivering goroutine
			var err error
			outcome, err = h.Run("s", text("next"), say("two"))
			second <- err
		}()
	}
	other := &recorder{}
	h.Subscribe("s", starter)
	h.Subscribe("s", other)
	first, err := h.Run("s", text("hi"), func(_ context.Context, sink event.Sink) (event.End, error) {
		sink.Emit(event.Text("s", event.AgentMessageChunk, "one"))
		return event.End{StopReason: "first"}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	wait(t, first)
	if err := wait(t, second); err != nil {
		t.Fatalf("the next turn did not start at TurnEnd: %v", err)
	}
	if o := wait(t, outcome); o.End.StopReason != "end_turn" || o.Err != nil {
		t.Errorf("second outcome %+v", o)
	}
	want := fmt.Sprint([]event.Kind{event.TurnStart, event.AgentMessageChunk, event.TurnEnd,
		event.TurnStart, event.AgentMessageChunk, event.TurnEnd})
	for name, r := range map[string]*recorder{"starter": starter, "other": other} {
		if got := fmt.Sprint(r.kinds()); got != want {
			t.Errorf("%s saw %s, want %s", name, got, want)
		}
	}
}

func TestRunOutcomes(t *testing.T) {
	h := NewHub(context.Background(), nil)
	defer h.Stop()
	r := &recorder{}
	h.Subscribe("s", r)
	release := make(chan struct{})
	done, err := h.Run("s", text("hi"), func(ctx context.Context, sink event.Sink) (event.End, error) {
		<-release
		return event.End{StopReason: "end_turn", Iterations: 2}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !h.IsRunning("s") || h.Running() != 1 {
		t.Error("the turn is not registered")
	}
	var busy *session.BusyError
	if _, err := h.Run("s", text("again"), say("x")); !errors.As(err, &busy) {
		t.Errorf("a second turn of the session: %v, want busy", err)
	}
	close(release)
	if o := wait(t, done); o.Err != nil || o.End.StopReason != "end_turn" || o.End.Iterations != 2 {
		t.Errorf("outcome %+v", o)
	}
	if h.IsRunning("s") {
		t.Error("the turn is still registered after its outcome")
	}

	// A turn that could not start: TurnEnd carries the error, and so does
	// the outcome.
	boom := errors.New("no such model")
	done, err = h.Run("s", text("hi"), func(context.Context, event.Sink) (event.End, error) { return event.End{}, boom })
	if err != nil {
		t.Fatal(err)
	}
	if o := wait(t, done); !errors.Is(o.Err, boom) {
		t.Errorf("outcome %+v", o)
	}
	r.mu.Lock()
	last := r.events[len(r.events)-1]
	first := r.events[0]
	r.mu.Unlock()
	if last.Kind != event.TurnEnd || !errors.Is(last.End.Err, boom) {
		t.Errorf("last event %+v", last)
	}
	if first.Kind != event.TurnStart || first.Messages[0].Content[0].Text != "hi" {
		t.Errorf("first event %+v", first)
	}
}

// TestCancelAndStop: Cancel ends a turn and its channel closes once the
// watchers were told; Stop cancels what runs, waits for its outcome and
// refuses new turns.
func TestCancelAndStop(t *testing.T) {
	h := NewHub(context.Background(), nil)
	r := &recorder{}
	h.Subscribe("s", r)
	blocked := func(ctx context.Context, _ event.Sink) (event.End, error) {
		<-ctx.Done()
		return event.End{StopReason: "cancelled"}, nil
	}
	done, err := h.Run("s", text("hi"), blocked)
	if err != nil {
		t.Fatal(err)
	}
	wait(t, h.Cancel("s"))
	if k := r.kinds(); k[len(k)-1] != event.TurnEnd {
		t.Errorf("Cancel returned before the watchers saw TurnEnd: %v", k)
	}
	if o := wait(t, done); o.End.StopReason != "cancelled" {
		t.Errorf("outcome %+v", o)
	}

	done, err = h.Run("s", text("hi"), blocked)
	if err != nil {
		t.Fatal(err)
	}
	h.Stop()
	select {
	case o := <-done:
		if o.End.StopReason != "cancelled" {
			t.Errorf("outcome %+v", o)
		}
	default:
		t.Error("Stop returned before the turn's outcome was delivered")
	}
	if _, err := h.Run("t", text("hi"), say("x")); !errors.Is(err, ErrStopping) {
		t.Errorf("Run after Stop: %v", err)
	}
}

// TestStalledWatcherKeepsCommitted: one watcher blocks the fan-out while
// the turn floods it with chunks and committed messages; every watcher
// still gets every Committed, in order, and hears of the drops.
func TestStalledWatcherKeepsCommitted(t *testing.T) {
	h := NewHub(context.Background(), nil)
	defer h.Stop()
	h.Queue = 4
	gate, stalled := make(chan struct{}), make(chan struct{})
	var once sync.Once
	slow := &recorder{on: func(ev event.Event) {
		if ev.Kind == event.AgentMessageChunk {
			once.Do(func() { close(stalled) })
			<-gate
		}
	}}
	fast := &recorder{}
	h.Subscribe("s", slow)
	h.Subscribe("s", fast)
	const commits = 100
	done, err := h.Run("s", text("hi"), func(_ context.Context, sink event.Sink) (event.End, error) {
		sink.Emit(event.Text("s", event.AgentMessageChunk, "first"))
		<-stalled
		for i := range commits {
			sink.Emit(event.Text("s", event.AgentThoughtChunk, "t"))
			sink.Emit(event.Event{SessionID: "s", Kind: event.UsageUpdate, Usage: &event.ContextUsage{}})
			sink.Emit(event.Event{SessionID: "s", Kind: event.Committed, Index: i,
				Messages: []message.Message{{Role: message.RoleAssistant}}})
		}
		close(gate)
		return event.End{StopReason: "end_turn"}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	wait(t, done)
	for name, r := range map[string]*recorder{"slow": slow, "fast": fast} {
		next, dropped := 0, 0
		r.mu.Lock()
		for _, e := range r.events {
			switch e.Kind {
			case event.Committed:
				if e.Index != next {
					t.Fatalf("%s: committed #%d arrived as #%d", name, e.Index, next)
				}
				next++
			case event.Dropped:
				dropped += e.Count
			}
		}
		last := r.events[len(r.events)-1].Kind
		r.mu.Unlock()
		if next != commits || dropped == 0 || last != event.TurnEnd {
			t.Errorf("%s: %d of %d committed, %d dropped, last %s", name, next, commits, dropped, last)
		}
	}
}

type forgetter struct {
	mu  sync.Mutex
	ids []string
}

func (f *forgetter) Forget(id string) {
	f.mu.Lock()
	f.ids = append(f.ids, id)
	f.mu.Unlock()
}

func (f *forgetter) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.ids)
}

// TestForgetWhenLeftAlone: a session's permission answers are dropped
// when its last watcher leaves with no turn running, or its turn ends
// with nobody watching; not while a turn runs.
func TestForgetWhenLeftAlone(t *testing.T) {
	f := &forgetter{}
	h := NewHub(context.Background(), f)
	defer h.Stop()
	r := &recorder{}
	h.Subscribe("s", r)
	release := make(chan struct{})
	done, _ := h.Run("s", text("hi"), func(context.Context, event.Sink) (event.End, error) {
		<-release
		return event.End{}, nil
	})
	h.Unsubscribe("s", r)
	if f.count() != 0 {
		t.Error("forgotten while its turn runs")
	}
	close(release)
	wait(t, done)
	if f.count() != 1 {
		t.Errorf("the turn ended with nobody watching: forgotten %d times", f.count())
	}
	h.Subscribe("s", r)
	h.Unsubscribe("s", r)
	if f.count() != 2 {
		t.Errorf("the last watcher left: forgotten %d times", f.count())
	}
}

// TestHubCoalescesBehind: while a watcher is busy, the turn's text chunks
// queue up and reach it merged (fewer, larger updates, the text whole and
// in order); every watcher of an event fanned out to several shares one
// encoding cache.
func TestHubCoalescesBehind(t *testing.T) {
	h := NewHub(context.Background(), nil)
	defer h.Stop()
	release, blocked := make(chan struct{}), make(chan struct{})
	busy := &recorder{}
	busy.on = func(ev event.Event) {
		if ev.Kind == event.AgentMessageChunk && ev.Content.Text == "first " {
			close(blocked)
			<-release
		}
	}
	other := &recorder{}
	h.Subscribe("s", busy)
	h.Subscribe("s", other)
	done, err := h.Run("s", nil, func(_ context.Context, sink event.Sink) (event.End, error) {
		sink.Emit(event.Text("s", event.AgentMessageChunk, "first "))
		<-blocked // the rest queue up behind the busy watcher
		for i := range 50 {
			sink.Emit(event.Text("s", event.AgentMessageChunk, fmt.Sprint(i, " ")))
		}
		close(release)
		return event.End{StopReason: "end_turn"}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	wait(t, done)
	busy.mu.Lock()
	defer busy.mu.Unlock()
	var all string
	chunks := 0
	for _, ev := range busy.events {
		if ev.Kind == event.AgentMessageChunk {
			all += ev.Content.Text
			chunks++
			if ev.Shared == nil {
				t.Error("an event fanned out to two watchers has no shared encodings")
			}
		}
	}
	want := "first "
	for i := range 50 {
		want += fmt.Sprint(i, " ")
	}
	if all != want {
		t.Fatalf("text %q, want %q", all, want)
	}
	if chunks > 3 {
		t.Errorf("%d chunks for 51 queued behind a busy watcher: not merged", chunks)
	}
}
