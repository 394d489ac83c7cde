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
	"hash/maphash"
	"sync"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
)

// DefaultQueue bounds the droppable events of a turn waiting for its
// watchers (event.Queue), so the turn never waits on a transport.
const DefaultQueue = 4096

// Forgetter drops what is remembered about a session once nobody watches
// it and no turn runs (the engine's "always" permission answers).
type Forgetter interface {
	Forget(sessionID string)
}

// Hub fans out events and owns the running turns. Its subscribers are
// event sinks whose Emit must not block (a slow transport queues, bounded,
// and says so itself) and must not run a turn itself: it may start one
// from another goroutine, even on seeing TurnEnd.
type Hub struct {
	forget Forgetter
	ctx    context.Context // parent of every turn
	stop   context.CancelFunc
	// Queue bounds each turn's queue (DefaultQueue when 0); set it
	// before the first turn.
	Queue int

	mu    sync.RWMutex
	subs  map[string][]event.Sink // copied on write: Publish reads without copying
	turns map[string]*turn
	// ending holds a turn unregistered while its TurnEnd is published:
	// Cancel still waits for it.
	ending  map[string]*turn
	stopped bool
	wg      sync.WaitGroup

	// edges order a session's TurnEnd before the next turn's TurnStart:
	// a turn is unregistered before its end is published, so the next
	// one may begin meanwhile, and waits here to announce itself.
	// Striped by session id: sessions rarely share one.
	seed  maphash.Seed
	edges [64]sync.Mutex

	// relay shares turns with other replicas (relay.go); nil: none.
	relay   Relay
	watches map[string]*watch // sessions watched on other replicas
}

type turn struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// RunFunc runs one turn under ctx, emitting its events to sink (safe for
// concurrent use). It returns how the turn ended; an error says it could
// not start.
type RunFunc func(ctx context.Context, sink event.Sink) (event.End, error)

// Outcome is how a turn run by the hub ended: End as the run returned it,
// Err when it could not start. A plain value, so that a hub spanning
// several processes can hand it on as it is.
type Outcome struct {
	End event.End
	Err error
}

// ErrStopping refuses turns once the hub is stopping.
var ErrStopping = errors.New("the server is shutting down")

// NewHub returns a hub whose turns run until Stop (or ctx ends); f (may be
// nil) is told when a session is left alone.
func NewHub(ctx context.Context, f Forgetter) *Hub {
	ctx, stop := context.WithCancel(ctx)
	return &Hub{forget: f, ctx: ctx, stop: stop, subs: map[string][]event.Sink{}, turns: map[string]*turn{},
		ending: map[string]*turn{}, seed: maphash.MakeSeed()}
}

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
func (h *Hub) Subscribe(id string, s event.Sink) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, o := range h.subs[id] {
		if o == s {
			return
		}
	}
	h.subs[id] = append(append([]event.Sink(nil), h.subs[id]...), s)
	h.watchLocked(id)
}

// Unsubscribe detaches s from the session; the last one to leave a session
// with no turn running drops its remembered permission answers.
func (h *Hub) Unsubscribe(id string, s event.Sink) {
	h.mu.Lock()
	old := h.subs[id]
	next := make([]event.Sink, 0, len(old))
	for _, o := range old {
		if o != s {
			next = append(next, o)
		}
	}
	idle := len(next) == 0 && h.turns[id] == nil
	if len(next) == 0 {
		delete(h.subs, id)
		h.unwatchLocked(id)
	} else {
		h.subs[id] = next
	}
	h.mu.Unlock()
	if idle {
		h.forgetSession(id)
	}
}

// Publish sends ev to every subscriber of its session except skip (nil:
// none), here and on the other replicas. A turn's own events reach it
// through the sink Run gives the turn.
func (h *Hub) Publish(ev event.Event, skip event.Sink) {
	if h.relay != nil {
		h.relay.Publish([]event.Event{ev})
	}
	h.publishHere(ev, skip)
}

// publishHere sends ev to this process's subscribers but skip.
func (h *Hub) publishHere(ev event.Event, skip event.Sink) {
	h.mu.RLock()
	subs := h.subs[ev.SessionID]
	h.mu.RUnlock()
	if len(subs) > 1 && ev.Shared == nil {
		ev.Shared = new(event.Shared) // encoded once per wire form
	}
	for _, s := range subs {
		if s != skip {
			s.Emit(ev)
		}
	}
}

// Run is the one way to run a turn of session id on the server. It
// registers the turn and tells the session's watchers (TurnStart with
// input), then runs run on a goroutine of its own, under a context that
// ends with the turn (Cancel, or Stop), with a sink that queues the turn's
// events (bounded, see event.Queue) for every subscriber. When run
// returns, the turn is unregistered, then its end is published (TurnEnd),
// so a watcher that sees TurnEnd can start the next turn at once; then the
// outcome is delivered on the returned channel (buffered: nobody has to
// read it). It fails without running when a turn of the session is
// running (*session.BusyError) or the hub is stopping (ErrStopping).
func (h *Hub) Run(id string, input []message.Block, run RunFunc) (<-chan Outcome, error) {
	ctx, t, err := h.begin(id, input)
	if err != nil {
		return nil, err
	}
	out := make(chan Outcome, 1)
	go func() {
		defer h.wg.Done() // Stop returns once the outcome is handed on
		queue := h.newQueue(fanout{h: h, relay: true})
		end, err := run(ctx, queue)
		queue.Close()
		h.end(id, t, end, err)
		out <- Outcome{End: end, Err: err}
	}()
	return out, nil
}

// newQueue is a turn's queue to sink. It merges text chunks as they come
// once CoalesceAt events wait (the delivery would merge them anyway): a
// thousand turns streaming at once on a busy server otherwise hold each
// reply queued one event per token.
func (h *Hub) newQueue(sink event.Sink) *event.Queue {
	q := event.NewQueue(sink, h.queueLimit())
	q.MergeFrom(CoalesceAt)
	return q
}

func (h *Hub) queueLimit() int {
	if h.Queue <= 0 {
		return DefaultQueue
	}
	return h.Queue
}

// begin registers a turn of session id and publishes its TurnStart.
func (h *Hub) begin(id string, input []message.Block) (context.Context, *turn, error) {
	h.mu.Lock()
	if h.stopped {
		h.mu.Unlock()
		return nil, nil, ErrStopping
	}
	if h.turns[id] != nil {
		h.mu.Unlock()
		return nil, nil, &session.BusyError{SessionID: id}
	}
	if replica, ok := h.elsewhere(id); ok {
		h.mu.Unlock()
		return nil, nil, &session.BusyError{SessionID: id, Holder: replica}
	}
	ctx, cancel := context.WithCancel(h.ctx)
	t := &turn{cancel: cancel, done: make(chan struct{})}
	h.turns[id] = t
	h.wg.Add(1)
	h.mu.Unlock()
	// After the previous turn's TurnEnd, if it is still being published.
	edge := h.edge(id)
	edge.Lock()
	h.Publish(event.Event{SessionID: id, Kind: event.TurnStart,
		Messages: []message.Message{{Role: message.RoleUser, Content: input}}}, nil)
	edge.Unlock()
	return ctx, t, nil
}

// end unregisters session id's turn, then tells its watchers how it ended
// (TurnEnd; err is set when the turn could not start at all).
func (h *Hub) end(id string, t *turn, end event.End, err error) {
	if err != nil && end.Err == nil {
		end.Err = err
	}
	edge := h.edge(id)
	edge.Lock()
	h.mu.Lock()
	delete(h.turns, id)
	h.ending[id] = t
	h.mu.Unlock()
	t.cancel()
	h.Publish(event.Event{SessionID: id, Kind: event.TurnEnd, End: &end}, nil)
	h.mu.Lock()
	delete(h.ending, id)
	idle := len(h.subs[id]) == 0 && h.turns[id] == nil
	h.mu.Unlock()
	close(t.done)
	edge.Unlock()
	if idle {
		h.forgetSession(id)
	}
}

func (h *Hub) edge(id string) *sync.Mutex {
	return &h.edges[maphash.String(h.seed, id)%uint64(len(h.edges))]
}

func (h *Hub) forgetSession(id string) {
	if h.forget != nil {
		h.forget.Forget(id)
	}
}

// Cancel stops the session's running turn, if any, here or on another
// replica, and returns a channel closed once it has ended, saved the
// session and told its watchers.
func (h *Hub) Cancel(id string) <-chan struct{} {
	if done := h.cancelLocal(id); done != closed {
		return done
	}
	if replica, ok := h.elsewhere(id); ok {
		return h.relay.Cancel(replica, id)
	}
	return closed
}

func (h *Hub) cancelLocal(id string) <-chan struct{} {
	h.mu.RLock()
	t := h.turns[id]
	if t == nil {
		t = h.ending[id]
	}
	h.mu.RUnlock()
	if t == nil {
		return closed
	}
	t.cancel()
	return t.done
}

var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// IsRunning reports whether session id has a turn running, here or on
// another replica.
func (h *Hub) IsRunning(id string) bool {
	if h.IsRunningHere(id) {
		return true
	}
	_, ok := h.elsewhere(id)
	return ok
}

// IsRunningHere reports whether session id has a turn running in this
// process.
func (h *Hub) IsRunningHere(id string) bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.turns[id] != nil
}

// fanout is the sink of a turn's queue: each delivery publishes what was
// queued. When that is CoalesceAt events or more, the watchers are behind
// (a busy server) and runs of text chunks are merged (event.Coalesce), so
// they catch up in a few larger updates, each encoded and framed once,
// rather than one per token; a short batch passes as it came. A turn's
// delivery goes to the other replicas first, as one handover (the relay
// sends it as one message), then to the watchers here; a watch's (relay:
// false) only here.
type fanout struct {
	h     *Hub
	relay bool
}

// CoalesceAt is the queued events from which a delivery merges text runs.
const CoalesceAt = 16

func (f fanout) Emit(ev event.Event) { f.EmitBatch([]event.Event{ev}) }

func (f fanout) EmitBatch(evs []event.Event) {
	if len(evs) >= CoalesceAt {
		evs = event.Coalesce(evs)
	}
	if f.relay && f.h.relay != nil {
		f.h.relay.Publish(evs)
	}
	for _, ev := range evs {
		f.h.publishHere(ev, nil)
	}
}
