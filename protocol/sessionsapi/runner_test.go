package sessionsapi

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
)

// fakeRunner is an engine.Runner that is not the engine: it commits the
// input, streams chunks and commits its answer, as any runner does (an
// external ACP agent's, say).
type fakeRunner struct {
	mu     sync.Mutex
	inputs []string
	stored int
	// turn, when set, streams the answer's chunks instead of one.
	turn func(n int, emit func(event.Event))
}

func (r *fakeRunner) Prompt(_ context.Context, req engine.Request) (session.Meta, event.End, error) {
	r.mu.Lock()
	n, at := len(r.inputs), r.stored
	r.inputs = append(r.inputs, req.Input[0].Text)
	r.stored += 2
	r.mu.Unlock()
	emit := func(ev event.Event) { ev.SessionID = req.SessionID; req.Sink.Emit(ev) }
	emit(event.Event{Kind: event.Committed, Index: at, Messages: []message.Message{{Role: message.RoleUser, Content: req.Input}}})
	answer := fmt.Sprintf("answer %d", n)
	if r.turn != nil {
		r.turn(n, emit)
	} else {
		emit(event.Text("", event.AgentMessageChunk, answer))
	}
	emit(event.Event{Kind: event.Committed, Index: at + 1,
		Messages: []message.Message{{Role: message.RoleAssistant, Content: []message.Block{message.Text(answer)}}}})
	return session.Meta{ID: req.SessionID}, event.End{StopReason: "end_turn"}, nil
}

func (r *fakeRunner) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.inputs...)
}

// TestAnyRunnerRunsSessions: the sessions' turns run on Options.Runner,
// not necessarily the engine, and stream as the engine's do.
func TestAnyRunnerRunsSessions(t *testing.T) {
	r := &fakeRunner{}
	f := newFixture(t, "", func(o *Options) { o.Runner = r })
	conv := f.create(nil)["id"].(string)
	s := f.stream(conv)
	f.do("POST", "/v1/sessions/"+conv+"/events", userMessage("hello"), nil)
	done := s.waitName("response.output_item.done", 1)
	s.waitName("response.completed", 1)
	if at(done.Data, "item", "content") == nil || !strings.Contains(fmt.Sprint(done.Data["item"]), "answer 0") {
		t.Errorf("item: %v", done.Data)
	}
	if got := r.got(); len(got) != 1 || got[0] != "hello" || len(f.llm.Requests()) != 0 {
		t.Errorf("runner got %v; the engine's model got %d requests", got, len(f.llm.Requests()))
	}
}

// TestQueuedAtTurnEndRunsNext: a message posted as the turn's last act
// (after its last checkpoint, before its TurnEnd) starts the next turn
// when the turn ends: the hub has unregistered the turn by the time the
// tracker sees TurnEnd, so nothing polls for it. A second watcher holds
// TurnEnd's publication until the queued message is taken: had the hub
// unregistered the turn only after publishing, the tracker would find it
// still running and the queued message would wait forever.
func TestQueuedAtTurnEndRunsNext(t *testing.T) {
	r := &fakeRunner{}
	var f *fixture
	var conv string
	r.turn = func(n int, emit func(event.Event)) {
		emit(event.Text("", event.AgentMessageChunk, fmt.Sprintf("answer %d", n)))
		if n == 0 {
			f.do("POST", "/v1/sessions/"+conv+"/events", userMessage("queued"), nil)
		}
	}
	f = newFixture(t, "", func(o *Options) { o.Runner = r })
	conv = f.create(nil)["id"].(string)
	s := f.stream(conv) // the tracker watches first, the holder after it
	id := conv[len("conv_"):]
	var ends atomic.Int32
	f.hub.Subscribe(id, event.SinkFunc(func(ev event.Event) {
		if ev.Kind != event.TurnEnd || ends.Add(1) != 1 {
			return
		}
		tr := f.api.sessions.lookup(id)
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			tr.mu.Lock()
			taken := len(tr.runner.queue) == 0
			tr.mu.Unlock()
			if taken {
				return
			}
		}
	}))
	f.do("POST", "/v1/sessions/"+conv+"/events", userMessage("first"), nil)
	s.waitName("response.completed", 2)
	if got := r.got(); strings.Join(got, ",") != "first,queued" {
		t.Errorf("turns ran with %v", got)
	}
}

// staller is a hub subscriber that holds the hub's fan-out on the first
// text chunk until released, as a watcher too slow to keep up would.
type staller struct {
	once            sync.Once
	stalled, resume chan struct{}
}

func (s *staller) Emit(ev event.Event) {
	if ev.Kind == event.AgentMessageChunk {
		s.once.Do(func() { close(s.stalled) })
		<-s.resume
	}
}

// TestStreamShowsDropped: when the hub drops live events of a turn for a
// watcher that fell behind, SSE clients see it (response.error, code
// events_dropped, with the count), and still get every stored item.
func TestStreamShowsDropped(t *testing.T) {
	st := &staller{stalled: make(chan struct{}), resume: make(chan struct{})}
	r := &fakeRunner{turn: func(_ int, emit func(event.Event)) {
		emit(event.Text("", event.AgentMessageChunk, "answer "))
		<-st.stalled
		for range 50 { // alternating kinds: nothing merges
			emit(event.Text("", event.AgentThoughtChunk, "hmm"))
			emit(event.Event{Kind: event.UsageUpdate, Usage: &event.ContextUsage{Used: 1}})
		}
		close(st.resume)
	}}
	f := newFixture(t, "", func(o *Options) { o.Runner = r })
	f.hub.Queue = 8
	conv := f.create(nil)["id"].(string)
	s := f.stream(conv) // the tracker watches first, the staller after it
	f.hub.Subscribe(conv[len("conv_"):], st)
	f.do("POST", "/v1/sessions/"+conv+"/events", userMessage("hello"), nil)
	s.waitName("response.completed", 1)
	drop := s.waitName("response.error", 1)
	if drop.Data["code"] != "events_dropped" || drop.Data["count"].(float64) < 1 || drop.Data["message"] == "" {
		t.Errorf("response.error: %v", drop.Data)
	}
	var stored []string
	for _, e := range s.all() {
		if e.Name == "response.output_item.done" && at(e.Data, "item", "status") == "completed" {
			stored = append(stored, fmt.Sprint(at(e.Data, "item", "type")))
		}
	}
	if strings.Join(stored, ",") != "message" {
		t.Errorf("stored items on the stream: %v (%v)", stored, s.names())
	}
}
