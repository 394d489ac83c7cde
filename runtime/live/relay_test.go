package live

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/openheim/openheim/runtime/event"
)

// fakeRelay records what a hub hands to the other replicas.
type fakeRelay struct {
	mu    sync.Mutex
	calls [][]event.Event
}

func (r *fakeRelay) Publish(evs []event.Event) {
	r.mu.Lock()
	r.calls = append(r.calls, append([]event.Event(nil), evs...))
	r.mu.Unlock()
}
func (r *fakeRelay) Watch(string, func([]event.Event)) func() { return func() {} }
func (r *fakeRelay) Elsewhere(string) (string, bool)          { return "", false }
func (r *fakeRelay) Cancel(string, string) <-chan struct{}    { return closed }

// gated blocks on its first text chunk until the gate opens.
type gated struct {
	once          sync.Once
	started, gate chan struct{}
}

func (g *gated) Emit(ev event.Event) {
	if ev.Kind == event.AgentMessageChunk {
		g.once.Do(func() { close(g.started); <-g.gate })
	}
}

// TestHubRelaysEachDeliveryAtOnce: what a turn's queue delivers at once
// goes to the relay in one Publish, in order, before the watchers here
// get it; a lone event goes at once, alone.
func TestHubRelaysEachDeliveryAtOnce(t *testing.T) {
	h := NewHub(context.Background(), nil)
	defer h.Stop()
	r := &fakeRelay{}
	h.SetRelay(r)
	w := &gated{started: make(chan struct{}), gate: make(chan struct{})}
	h.Subscribe("s", w)
	done, err := h.Run("s", nil, func(_ context.Context, sink event.Sink) (event.End, error) {
		sink.Emit(event.Text("s", event.AgentMessageChunk, "a"))
		<-w.started // "a" holds the watcher here; the relay had it first
		for _, s := range []string{"b", "c", "d"} {
			sink.Emit(event.Text("s", event.AgentMessageChunk, s))
		}
		close(w.gate)
		return event.End{StopReason: event.StopEndTurn}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	<-done
	var got []string
	for _, c := range r.calls {
		s := ""
		for _, e := range c {
			if e.Content != nil {
				s += e.Content.Text
			} else {
				s += "<" + string(e.Kind) + ">"
			}
		}
		got = append(got, s)
	}
	// The chunks queued while the watcher held the delivery of "a" go
	// together.
	if g := strings.Join(got, " "); g != "<turn_start> a bcd <turn_end>" {
		t.Fatalf("relay calls %q", g)
	}
}
