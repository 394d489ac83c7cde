// Package live is what the connections of one server process share about
// sessions: it owns the running turns (one per session) and fans each
// session's events out to everyone watching it, whatever their transport
// (ACP over /ws or /acp, the sessions API's SSE streams). A turn outlives
// the connection that started it until it ends, is cancelled (by anyone
// watching) or the hub stops.
package live

import (
	"context"
	"errors"
	"sync"

	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
)

// Subscriber receives a session's events. Send must not block: a slow
// transport queues (bounded) and says so itself.
type Subscriber interface {
	Send(event.Event)
}

// Hub fans out events and owns the running turns.
type Hub struct {
	engine *engine.Engine
	ctx    context.Context // parent of every turn
	stop   context.CancelFunc

	mu      sync.RWMutex
	subs    map[string][]Subscriber // copied on write: Publish reads without copying
	turns   map[string]*turn
	stopped bool
	wg      sync.WaitGroup
}

type turn struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// ErrStopping refuses turns once the hub is stopping.
var ErrStopping = errors.New("the server is shutting down")

// NewHub returns a hub whose turns run until Stop (or ctx ends).
func NewHub(ctx context.Context, e *engine.Engine) *Hub {
	ctx, stop := context.WithCancel(ctx)
	return &Hub{engine: e, ctx: ctx, stop: stop, subs: map[string][]Subscriber{}, turns: map[string]*turn{}}
}

// Engine is the engine the hub's turns run on.
func (h *Hub) Engine() *engine.Engine { return h.engine }

// Stop cancels every running turn and waits until each has ended, saved
// its session and been delivered.
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

// Subscribe makes s receive session id's events (once, however often it
// subscribes).
func (h *Hub) Subscribe(id string, s Subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, o := range h.subs[id] {
		if o == s {
			return
		}
	}
	h.subs[id] = append(append([]Subscriber(nil), h.subs[id]...), s)
}

// Unsubscribe detaches s from the session; the last one to leave a session
// with no turn running drops its remembered permission answers.
func (h *Hub) Unsubscribe(id string, s Subscriber) {
	h.mu.Lock()
	old := h.subs[id]
	next := make([]Subscriber, 0, len(old))
	for _, o := range old {
		if o != s {
			next = append(next, o)
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

// Publish sends ev to every subscriber of its session except skip (nil:
// none).
func (h *Hub) Publish(ev event.Event, skip Subscriber) {
	h.mu.RLock()
	subs := h.subs[ev.SessionID]
	h.mu.RUnlock()
	for _, s := range subs {
		if s != skip {
			s.Send(ev)
		}
	}
}

// Begin registers a turn of session id that takes input, and tells the
// session's watchers (TurnStart); it fails when a turn is running. The
// caller runs the turn under the returned context, calls End when it has
// ended, then Delivered once its outcome is handed on.
func (h *Hub) Begin(id string, input []message.Block) (context.Context, error) {
	h.mu.Lock()
	if h.stopped {
		h.mu.Unlock()
		return nil, ErrStopping
	}
	if h.turns[id] != nil {
		h.mu.Unlock()
		return nil, &session.BusyError{SessionID: id}
	}
	ctx, cancel := context.WithCancel(h.ctx)
	h.turns[id] = &turn{cancel: cancel, done: make(chan struct{})}
	h.wg.Add(1)
	h.mu.Unlock()
	h.Publish(event.Event{SessionID: id, Kind: event.TurnStart,
		Messages: []message.Message{{Role: message.RoleUser, Content: input}}}, nil)
	return ctx, nil
}

// End unregisters session id's turn after telling its watchers how it
// ended (TurnEnd; err is set when the turn could not start at all).
func (h *Hub) End(id string, end event.End, err error) {
	if err != nil && end.Err == nil {
		end.Err = err
	}
	h.Publish(event.Event{SessionID: id, Kind: event.TurnEnd, End: &end}, nil)
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

// Delivered says a turn's outcome was handed to whoever waits for it:
// Stop returns only after that, so a stopping server still answers every
// prompt (stopReason cancelled) before it closes.
func (h *Hub) Delivered() { h.wg.Done() }

// Cancel stops the session's running turn, if any, and returns a channel
// closed once it has ended and saved the session.
func (h *Hub) Cancel(id string) <-chan struct{} {
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

// IsRunning reports whether session id has a turn running.
func (h *Hub) IsRunning(id string) bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.turns[id] != nil
}
