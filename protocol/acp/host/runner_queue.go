package host

import (
	"context"
	"slices"
	"sync"

	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
)

// A prompt for a session whose turn is running on this Runner follows the
// agent's queue policy (seed 002's QueuePolicy, [acp_agents.X] queue):
// "queue" waits for the turn and runs after it (in order), "coalesce"
// joins the prompts waiting into one next turn (each caller gets its
// outcome and its events), "reject" fails at once with session.BusyError.

// sessionQueue is one session's running turn and the prompts waiting.
type sessionQueue struct {
	running bool
	waiting []chan struct{} // queue: closed when it is their turn
	next    *coalesced      // coalesce: the turn the waiting prompts join
}

// coalesced is the next turn of a session, taking every prompt that
// arrives before it starts.
type coalesced struct {
	// ctx and base are the first prompt's: the turn runs under its
	// context, gate and settings.
	ctx     context.Context
	base    engine.Request
	input   []message.Block
	sinks   []event.Sink
	started bool
	done    chan struct{}
	meta    session.Meta
	end     event.End
	err     error
}

type queues struct {
	mu sync.Mutex
	m  map[string]*sessionQueue
}

func (q *queues) of(id string) *sessionQueue {
	if q.m == nil {
		q.m = map[string]*sessionQueue{}
	}
	s := q.m[id]
	if s == nil {
		s = &sessionQueue{}
		q.m[id] = s
	}
	return s
}

// queuePolicy is the agent's configured policy ("queue" when unknown).
func (r *Runner) queuePolicy() string {
	a, err := r.Engine.Config.ACPAgentNamed(r.Agent)
	if err != nil {
		return config.QueueWait
	}
	return a.QueuePolicy()
}

// Prompt runs one turn of req on the agent (engine.Runner), after the
// session's running turn when there is one (the queue policy).
func (r *Runner) Prompt(ctx context.Context, req engine.Request) (session.Meta, event.End, error) {
	if req.SessionID == "" {
		return r.prompt(ctx, req)
	}
	id := req.SessionID
	r.queues.mu.Lock()
	sq := r.queues.of(id)
	if !sq.running {
		sq.running = true
		r.queues.mu.Unlock()
		defer r.leave(id)
		return r.prompt(ctx, req)
	}
	switch r.queuePolicy() {
	case config.QueueReject:
		r.queues.mu.Unlock()
		return session.Meta{}, event.End{}, &session.BusyError{SessionID: id}
	case config.QueueCoalesce:
		return r.coalesce(ctx, sq, req) // unlocks
	}
	turn := make(chan struct{})
	sq.waiting = append(sq.waiting, turn)
	r.queues.mu.Unlock()
	select {
	case <-turn:
	case <-ctx.Done():
		r.queues.mu.Lock()
		if i := slices.Index(sq.waiting, turn); i >= 0 {
			sq.waiting = slices.Delete(sq.waiting, i, i+1)
			r.queues.mu.Unlock()
			return session.Meta{}, event.End{StopReason: event.StopCancelled}, nil
		}
		r.queues.mu.Unlock() // handed the turn meanwhile: run it (it ends cancelled)
	}
	defer r.leave(id)
	return r.prompt(ctx, req)
}

// leave ends a session's turn: the next waiting prompt runs, else the
// coalesced one, else the session is idle.
func (r *Runner) leave(id string) {
	r.queues.mu.Lock()
	defer r.queues.mu.Unlock()
	sq := r.queues.of(id)
	switch {
	case len(sq.waiting) > 0:
		close(sq.waiting[0])
		sq.waiting = sq.waiting[1:]
	case sq.next != nil && !sq.next.started:
		sq.next.started = true
		go r.runCoalesced(id, sq.next)
		sq.next = nil
	default:
		sq.running = false
		delete(r.queues.m, id)
	}
}

// coalesce joins req to the session's next turn (starting one when none
// waits) and returns that turn's outcome; r.queues.mu is held on entry.
func (r *Runner) coalesce(ctx context.Context, sq *sessionQueue, req engine.Request) (session.Meta, event.End, error) {
	c := sq.next
	if c == nil {
		c = &coalesced{done: make(chan struct{}), ctx: ctx, base: req}
		sq.next = c
	}
	joined := len(c.input) > 0
	c.input = append(c.input, req.Input...)
	if req.Sink != nil {
		c.sinks = append(c.sinks, req.Sink)
	}
	r.queues.mu.Unlock()
	if h := r.running(); joined && h != nil {
		h.hook(TurnEvent{Type: "coalesced", SessionID: req.SessionID})
	}
	select {
	case <-c.done:
		return c.meta, c.end, c.err
	case <-ctx.Done():
		// The coalesced turn goes on for the others (and with this input).
		return session.Meta{}, event.End{StopReason: event.StopCancelled}, nil
	}
}

// runCoalesced runs the joined prompts as one turn.
func (r *Runner) runCoalesced(id string, c *coalesced) {
	defer r.leave(id)
	r.queues.mu.Lock()
	req := c.base
	req.Input, req.Sink = c.input, fanOut(slices.Clone(c.sinks))
	r.queues.mu.Unlock()
	c.meta, c.end, c.err = r.prompt(c.ctx, req)
	close(c.done)
}

// fanOut sends every event to each sink.
func fanOut(sinks []event.Sink) event.Sink {
	return event.SinkFunc(func(ev event.Event) {
		for _, s := range sinks {
			s.Emit(ev)
		}
	})
}

// running is the agent's host, if it is started.
func (r *Runner) running() *Host {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.host
}
