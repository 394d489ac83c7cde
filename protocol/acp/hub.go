package acp

import (
	"context"
	"errors"
	"sync"

	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/session"
)

// Hub is what the connections of one process share: it fans each session's
// updates out to every connection that has the session open, and it owns
// the running turns, so one connection can cancel a turn another started
// and a turn outlives the connection that started it (a browser reload, a
// client closed for being too slow) until it ends or the hub stops.
type Hub struct {
	engine *engine.Engine
	ctx    context.Context // parent of every turn
	stop   context.CancelFunc

	mu      sync.RWMutex
	subs    map[string][]*Agent // copied on write: publish reads without copying
	turns   map[string]*turn
	stopped bool
	wg      sync.WaitGroup
}

type turn struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// errStopping refuses turns once the hub is stopping.
var errStopping = errors.New("the server is shutting down")

// NewHub returns a hub whose turns run until Stop (or ctx ends).
func NewHub(ctx context.Context, e *engine.Engine) *Hub {
	ctx, stop := context.WithCancel(ctx)
	return &Hub{engine: e, ctx: ctx, stop: stop, subs: map[string][]*Agent{}, turns: map[string]*turn{}}
}

// Stop cancels every running turn and waits until each has ended and saved
// its session.
func (h *Hub) Stop() {
	h.mu.Lock()
	h.stopped = true // no turn starts (wg.Add) once Wait may be running
	h.mu.Unlock()
	h.stop()
	h.wg.Wait()
}

// Running reports how many turns are running.
func (h *Hub) Running() int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.turns)
}

func (h *Hub) subscribe(id string, a *Agent) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.subs[id] {
		if s == a {
			return
		}
	}
	h.subs[id] = append(append([]*Agent(nil), h.subs[id]...), a)
}

// unsubscribe detaches a from the session; the last one to leave a session
// with no turn running drops its remembered permission answers.
func (h *Hub) unsubscribe(id string, a *Agent) {
	h.mu.Lock()
	old := h.subs[id]
	next := make([]*Agent, 0, len(old))
	for _, s := range old {
		if s != a {
			next = append(next, s)
		}
	}
	idle := len(next) == 0 && h.turns[id] == nil
	if len(next) == 0 {
		delete(h.subs, id)
	} else {
		h.subs[id] = next
	}
	h.mu.Unlock()
	if idle {
		h.engine.Forget(id)
	}
}

// publish sends ev to every connection that has its session open, except
// skip (nil: none), each in the form it speaks.
func (h *Hub) publish(ev event.Event, skip *Agent) {
	h.mu.RLock()
	subs := h.subs[ev.SessionID]
	h.mu.RUnlock()
	for _, a := range subs {
		if a != skip {
			a.send(ev)
		}
	}
}

// begin registers a turn of session id; it fails when one is running.
func (h *Hub) begin(id string) (context.Context, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped {
		return nil, errStopping
	}
	if h.turns[id] != nil {
		return nil, &session.BusyError{SessionID: id}
	}
	ctx, cancel := context.WithCancel(h.ctx)
	h.turns[id] = &turn{cancel: cancel, done: make(chan struct{})}
	h.wg.Add(1)
	return ctx, nil
}

func (h *Hub) end(id string) {
	h.mu.Lock()
	t := h.turns[id]
	delete(h.turns, id)
	idle := len(h.subs[id]) == 0
	h.mu.Unlock()
	t.cancel()
	close(t.done)
	if idle {
		h.engine.Forget(id)
	}
}

// delivered is called once a turn's outcome is handed to its prompt
// handler: Stop returns only after that, so a stopping server still
// answers every prompt (stopReason cancelled) before it closes.
func (h *Hub) delivered() { h.wg.Done() }

// cancel stops the session's running turn, if any, and returns a channel
// closed once it has ended and saved the session.
func (h *Hub) cancel(id string) <-chan struct{} {
	h.mu.RLock()
	t := h.turns[id]
	h.mu.RUnlock()
	if t == nil {
		return closed
	}
	t.cancel()
	return t.done
}

var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// running reports whether session id has a turn running.
func (h *Hub) running(id string) bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.turns[id] != nil
}
