package jetstream

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/live"
)

// Relay is live.Relay over core NATS subjects: a running turn's events on
// P.ev.<session> (in order: one publisher, one connection), and requests
// to one replica on P.rep.<replica>.<what>. Nothing of it is stored: a
// replica that misses events reads the session from the store, as a
// client reconnecting does.
type Relay struct {
	b  *Backend
	me string // this replica's subject-safe name

	mu   sync.Mutex
	subs []*nats.Subscription
}

var _ live.Relay = (*Relay)(nil)

const hFrom = "Oh-From" // the replica that published an event

// Relay returns the backend's relay.
func (b *Backend) Relay() *Relay { return &Relay{b: b, me: kvKey(b.opts.Replica)} }

func (r *Relay) evSubject(id string) string { return r.b.opts.Prefix + ".ev." + id }

func (r *Relay) repSubject(replica, what string) string {
	return r.b.opts.Prefix + ".rep." + kvKey(replica) + "." + what
}

// Publish implements live.Relay. An event that cannot be encoded or sent
// is dropped with a warning: the turn never waits on other replicas.
func (r *Relay) Publish(ev event.Event) {
	data, err := event.MarshalWire(ev)
	if err != nil {
		r.b.warn("relay: encoding an event: " + err.Error())
		return
	}
	m := &nats.Msg{Subject: r.evSubject(ev.SessionID), Data: data, Header: nats.Header{hFrom: []string{r.me}}}
	if err := r.b.nc.PublishMsg(m); err != nil {
		r.b.warn("relay: publishing an event: " + err.Error())
	}
}

// Watch implements live.Relay: deliver is called on the subscription's
// own goroutine, one event at a time, in the order they were published.
func (r *Relay) Watch(id string, deliver func(event.Event)) (stop func()) {
	sub, err := r.b.nc.Subscribe(r.evSubject(id), func(m *nats.Msg) {
		if m.Header.Get(hFrom) == r.me {
			return
		}
		ev, err := event.UnmarshalWire(m.Data)
		if err != nil {
			r.b.warn("relay: decoding an event: " + err.Error())
			return
		}
		deliver(ev)
	})
	if err != nil {
		r.b.warn("relay: watching session " + id + ": " + err.Error())
		return func() {}
	}
	// The hub's queue bounds what waits; NATS must not drop before it.
	sub.SetPendingLimits(-1, -1)
	stopLease := r.watchLease(id, deliver)
	return func() {
		sub.Unsubscribe()
		stopLease()
	}
}

// watchLease ends, for the watchers here, a turn whose replica died: its
// lease expires (the server removes it, leaving a purge marker, where a
// replica releasing its lease deletes it) and no TurnEnd will come from
// it. What it stored is kept; the step it was in is cut short, as after a
// crash on one host, and the next turn (on any replica) continues.
func (r *Relay) watchLease(id string, deliver func(event.Event)) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	w, err := r.b.leases.Watch(ctx, id)
	if err != nil {
		cancel()
		r.b.warn("relay: watching the lease of session " + id + ": " + err.Error())
		return func() {}
	}
	go func() {
		defer w.Stop()
		var last holder
		for {
			select {
			case <-ctx.Done():
				return
			case e, ok := <-w.Updates():
				if !ok {
					return
				}
				if e == nil {
					continue
				}
				switch e.Operation() {
				case jetstream.KeyValuePut:
					json.Unmarshal(e.Value(), &last)
				case jetstream.KeyValuePurge:
					if last.Replica != "" && kvKey(last.Replica) != r.me {
						deliver(event.Event{SessionID: id, Kind: event.TurnEnd, End: &event.End{StopReason: event.StopEndTurn,
							Err: fmt.Errorf("replica %s stopped answering and its lease expired: the turn ended there; every step it stored is kept", last.Replica)}})
					}
					last = holder{}
				default:
					last = holder{}
				}
			}
		}
	}()
	return cancel
}

// Elsewhere implements live.Relay from the session's lease.
func (r *Relay) Elsewhere(id string) (string, bool) {
	replica, ok := r.b.Holder(id)
	if !ok || kvKey(replica) == r.me {
		return "", false
	}
	return replica, true
}

// cancelWait bounds waiting for another replica's turn to end.
const cancelWait = 30 * time.Second

// Cancel implements live.Relay.
func (r *Relay) Cancel(replica, id string) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.b.nc.Request(r.repSubject(replica, "cancel"), []byte(id), cancelWait)
	}()
	return done
}

// forwardWait bounds a forwarded request.
const forwardWait = 30 * time.Second

// Forward implements live.Forwarder.
func (r *Relay) Forward(replica string, req live.Request) (live.Response, error) {
	data, _ := json.Marshal(req)
	m, err := r.b.nc.Request(r.repSubject(replica, "http"), data, forwardWait)
	if err != nil {
		return live.Response{}, err
	}
	var resp live.Response
	err = json.Unmarshal(m.Data, &resp)
	return resp, err
}

// Serve implements live.Forwarder: it answers the other replicas: cancels of turns running here (cancel
// returns once the turn ended) and forwarded requests (serve answers
// them). Each is handled on a goroutine of its own; Close stops serving.
func (r *Relay) Serve(cancel func(id string) <-chan struct{}, serve func(live.Request) live.Response) error {
	c, err := r.b.nc.Subscribe(r.repSubject(r.b.opts.Replica, "cancel"), func(m *nats.Msg) {
		go func() {
			select {
			case <-cancel(string(m.Data)):
			case <-time.After(cancelWait):
			}
			m.Respond(nil)
		}()
	})
	if err != nil {
		return err
	}
	h, err := r.b.nc.Subscribe(r.repSubject(r.b.opts.Replica, "http"), func(m *nats.Msg) {
		go func() {
			var req live.Request
			resp := live.Response{Status: 400, Body: []byte(`{"error":"bad forwarded request"}`)}
			if json.Unmarshal(m.Data, &req) == nil {
				resp = serve(req)
			}
			data, _ := json.Marshal(resp)
			m.Respond(data)
		}()
	})
	if err != nil {
		c.Unsubscribe()
		return err
	}
	r.mu.Lock()
	r.subs = append(r.subs, c, h)
	r.mu.Unlock()
	return nil
}

// Close stops serving.
func (r *Relay) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.subs {
		s.Unsubscribe()
	}
	r.subs = nil
}
