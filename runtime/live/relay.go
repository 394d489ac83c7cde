package live

import (
	"fmt"

	"github.com/openheim/openheim/runtime/event"
)

// ReplicaLostError ends, for the watchers on other replicas, a turn whose
// replica died: its lease expired with the turn unfinished. The session
// itself is as after a crash: every step stored is kept, the half-done one
// marked cut short, and any replica may run its next turn.
type ReplicaLostError struct {
	Replica string
}

func (e *ReplicaLostError) Error() string {
	return fmt.Sprintf("replica %s stopped answering and its lease expired: the turn ended there; every step it stored is kept", e.Replica)
}

// Relay shares a hub's turns with the hubs of the other replicas of a
// cluster, whose sessions' leases say which replica runs which turn. A
// hub without one serves this process only.
type Relay interface {
	// Publish hands events of a turn running here, in order, to the
	// replicas watching its session: a delivery of the turn's queue at
	// once (what was queued while the last one ran), which they receive
	// together. It must not keep evs.
	Publish(evs []event.Event)
	// Watch delivers, in order, session id's events published by other
	// replicas until stop is called, several at once when they came
	// together; deliver must not block and must not keep the slice.
	Watch(id string, deliver func([]event.Event)) (stop func())
	// Elsewhere names the other replica holding session id's lease: it is
	// running a turn of the session.
	Elsewhere(id string) (replica string, ok bool)
	// Cancel asks replica to cancel session id's turn; the channel closes
	// once it has ended (or the replica did not answer).
	Cancel(replica, id string) <-chan struct{}
}

// SetRelay makes the hub share its turns through r (nil: none). Call it
// before the hub is used.
func (h *Hub) SetRelay(r Relay) {
	h.relay = r
	h.watches = map[string]*watch{}
}

// watch is this hub's view of a session's turns on other replicas: their
// events, queued (bounded, with dropped reporting, as a local turn's) for
// the subscribers here.
type watch struct {
	stop  func()
	queue *event.Queue
}

// watchLocked starts watching session id on the other replicas; h.mu is
// held.
func (h *Hub) watchLocked(id string) {
	if h.relay == nil || h.watches[id] != nil {
		return
	}
	q := h.newQueue(fanout{h: h})
	h.watches[id] = &watch{queue: q, stop: h.relay.Watch(id, q.EmitBatch)}
}

// unwatchLocked stops it once nobody here watches the session; h.mu is
// held. What is still queued is delivered on a goroutine of its own.
func (h *Hub) unwatchLocked(id string) {
	w := h.watches[id]
	if w == nil {
		return
	}
	delete(h.watches, id)
	w.stop()
	go w.queue.Close()
}

// elsewhere names the replica running session id's turn, if another one
// does.
func (h *Hub) elsewhere(id string) (string, bool) {
	if h.relay == nil {
		return "", false
	}
	return h.relay.Elsewhere(id)
}

// CancelHere cancels session id's turn if it runs in this process, for
// the replica that received a cancel from another one.
func (h *Hub) CancelHere(id string) <-chan struct{} { return h.cancelLocal(id) }

// RunningElsewhere names the other replica running a turn of session id.
func (h *Hub) RunningElsewhere(id string) (string, bool) {
	if h.IsRunningHere(id) {
		return "", false
	}
	return h.elsewhere(id)
}

// Request is an HTTP request handed to the replica running a session's
// turn, which serves it as if it had come in itself: what a client sends
// to a running turn (a message, an answer, a tool's output) reaches it
// whichever replica the load balancer picked.
type Request struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	Body   []byte `json:"body,omitempty"`
}

// Response is a forwarded request's answer.
type Response struct {
	Status int    `json:"status"`
	Body   []byte `json:"body,omitempty"`
}

// Forwarder carries requests between replicas.
type Forwarder interface {
	// Forward sends req to replica and returns its answer.
	Forward(replica string, req Request) (Response, error)
	// Serve answers the other replicas from now on: their cancels of
	// turns running here (cancel returns once the turn ended) and their
	// forwarded requests (serve answers them).
	Serve(cancel func(id string) <-chan struct{}, serve func(Request) Response) error
	// Close stops serving.
	Close()
}
