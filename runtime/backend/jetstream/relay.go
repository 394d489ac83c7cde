package jetstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/live"
	"github.com/openheim/openheim/runtime/message"
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

	// The leases of the sessions watched here (watchLease).
	lmu      sync.Mutex
	lwatch   map[string]map[*int]func([]event.Event)
	holders  map[string]holder
	lstarted bool
	lready   bool
}

var _ live.Relay = (*Relay)(nil)

// Relay returns the backend's relay (one per backend).
func (b *Backend) Relay() *Relay {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.relay == nil {
		b.relay = &Relay{b: b, me: kvKey(b.opts.Replica)}
	}
	return b.relay
}

func (r *Relay) evSubject(id string) string { return r.b.opts.Prefix + ".ev." + id }

func (r *Relay) repSubject(replica, what string) string {
	return r.b.opts.Prefix + ".rep." + kvKey(replica) + "." + what
}

// batches hold the encoders of Publish, reused across turns.
var batches = sync.Pool{New: func() any { return new(event.WireBatch) }}

// Publish implements live.Relay: evs go as one message (a batch, see
// event.WireBatch), or as several when they would be larger than the
// server's max_payload. The connection does not echo: this replica's own
// watchers never get back what it published (they had it from the hub).
// An event that cannot be encoded, or is larger than a message may be on
// its own, is replaced by its stand-ins (see standIns): a committed
// message by a reference the watchers' replica reads from the store, the
// others by what keeps the watchers consistent, at worst a Dropped notice.
// A turn never waits on other replicas.
func (r *Relay) Publish(evs []event.Event) {
	b := batches.Get().(*event.WireBatch)
	defer batches.Put(b)
	b.Max = int(r.b.nc.MaxPayload())
	subject := ""
	send := func(data []byte) {
		if err := r.b.nc.Publish(subject, data); err != nil {
			r.b.warn("relay: publishing events: " + err.Error())
		}
	}
	for i := range evs {
		ev := &evs[i]
		if s := r.evSubject(ev.SessionID); s != subject { // one session's, in practice
			b.Flush(send)
			subject = s
		}
		if err := b.Add(ev, send); err != nil {
			if !errors.Is(err, event.ErrWireTooLarge) || ev.Kind != event.Committed {
				r.b.warn("relay: encoding a " + string(ev.Kind) + " event: " + err.Error())
			}
			for _, stand := range standIns(ev, b.Max) {
				err := b.Add(&stand, send)
				if err != nil && stand.Kind == event.Committed && stand.Messages != nil {
					stand.Messages, stand.Count = nil, 1 // read from the store where it is watched
					err = b.Add(&stand, send)
				}
				if err != nil {
					r.b.warn("relay: encoding a stand-in: " + err.Error())
				}
			}
		}
	}
	b.Flush(send)
}

// standIns replace an event that cannot be sent in a message of max
// bytes. A Committed one goes a message at a time (Publish sends a message
// too large on its own as a reference, no Messages and Count 1, that the
// watchers' replica reads from the store: see refill), since transports
// that name items by their place in the history must not miss one. A
// TurnStart keeps its user message's place with a note in it (the message
// itself is committed next); a TurnEnd keeps its end with the error cut
// short. Anything else becomes a Dropped notice.
func standIns(ev *event.Event, max int) []event.Event {
	switch {
	case ev.Kind == event.Committed:
		out := make([]event.Event, len(ev.Messages))
		for j := range ev.Messages {
			out[j] = event.Event{SessionID: ev.SessionID, Kind: event.Committed, Index: ev.Index + j, Messages: ev.Messages[j : j+1]}
		}
		return out
	case ev.Kind == event.TurnStart:
		note := message.Message{Role: message.RoleUser, Content: []message.Block{message.Text(tooLargeInput)}}
		return []event.Event{{SessionID: ev.SessionID, Kind: event.TurnStart, Messages: []message.Message{note}}}
	case ev.Kind == event.TurnEnd && ev.End != nil:
		end := *ev.End
		if end.Err != nil {
			end.Err = errors.New(cut(end.Err.Error(), min(4<<10, max/4)))
		}
		return []event.Event{{SessionID: ev.SessionID, Kind: event.TurnEnd, End: &end}}
	}
	return []event.Event{{SessionID: ev.SessionID, Kind: event.Dropped, Count: 1}}
}

// tooLargeInput stands in a relayed TurnStart for an input too large to
// send in a message.
const tooLargeInput = "(the input is too large to relay: it is in the session's history)"

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// refill reads from the store the messages of the Committed references
// among evs (see standIns): they were stored before they were published,
// most often in the history's last entry. A reference that cannot be read
// becomes a Dropped notice.
func (r *Relay) refill(id string, evs []event.Event) {
	var from int
	var held []message.Message // messages from, from+1, ... as last read
	for i := range evs {
		ev := &evs[i]
		if ev.Kind != event.Committed || len(ev.Messages) > 0 || ev.Count <= 0 {
			continue
		}
		if ev.Index < from || ev.Index+ev.Count > from+len(held) {
			var err error
			if from, held, err = r.b.entryHolding(id, ev.Index); err != nil {
				r.b.warn(fmt.Sprintf("relay: reading message %d of session %s, too large to relay: %v", ev.Index, id, err))
			}
		}
		if ev.Index < from || ev.Index+ev.Count > from+len(held) {
			*ev = event.Event{SessionID: ev.SessionID, Kind: event.Dropped, Count: ev.Count}
			continue
		}
		a, b := ev.Index-from, ev.Index-from+ev.Count
		ev.Messages, ev.Count = held[a:b:b], 0
	}
}

// Watch implements live.Relay: deliver is called on the subscription's
// own goroutine with each message's events, in the order they were
// published.
func (r *Relay) Watch(id string, deliver func([]event.Event)) (stop func()) {
	var evs []event.Event // reused: deliver does not keep it
	sub, err := r.b.nc.Subscribe(r.evSubject(id), func(m *nats.Msg) {
		var err error
		evs, err = event.UnmarshalWireBatch(evs[:0], m.Data)
		if err != nil {
			r.b.warn("relay: decoding events: " + err.Error())
		}
		r.refill(id, evs)
		if len(evs) > 0 {
			deliver(evs)
		}
		clear(evs) // drop references to delivered content
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
// crash on one host, and the next turn (on any replica) continues. One
// watch of the whole leases bucket serves every watched session.
func (r *Relay) watchLease(id string, deliver func([]event.Event)) (stop func()) {
	key := new(int)
	r.lmu.Lock()
	if r.lwatch == nil {
		r.lwatch = map[string]map[*int]func([]event.Event){}
		r.holders = map[string]holder{}
	}
	if r.lwatch[id] == nil {
		r.lwatch[id] = map[*int]func([]event.Event){}
	}
	r.lwatch[id][key] = deliver
	start := !r.lstarted
	r.lstarted = true
	r.lmu.Unlock()
	if start {
		go r.leaseLoop()
	}
	return func() {
		r.lmu.Lock()
		delete(r.lwatch[id], key)
		if len(r.lwatch[id]) == 0 {
			delete(r.lwatch, id)
		}
		r.lmu.Unlock()
	}
}

// leaseLoop follows the leases bucket until the backend closes,
// restarting the watch should it end (a reconnect).
func (r *Relay) leaseLoop() {
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-r.b.stop; cancel() }()
	for ctx.Err() == nil && !r.b.nc.IsClosed() {
		w, err := r.b.leases.WatchAll(ctx)
		if err != nil {
			r.b.warn("relay: watching the leases: " + err.Error())
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
			continue
		}
		for e := range w.Updates() {
			if e != nil {
				r.leaseChanged(e)
				continue
			}
			r.lmu.Lock()
			r.lready = true // the holders are known from here on
			r.lmu.Unlock()
		}
		r.lmu.Lock()
		r.lready = false
		r.lmu.Unlock()
		w.Stop()
	}
}

func (r *Relay) leaseChanged(e jetstream.KeyValueEntry) {
	id := e.Key()
	r.lmu.Lock()
	last := r.holders[id]
	var delivers []func([]event.Event)
	switch e.Operation() {
	case jetstream.KeyValuePut:
		var h holder
		json.Unmarshal(e.Value(), &h)
		r.holders[id] = h
	case jetstream.KeyValuePurge:
		delete(r.holders, id)
		if last.Replica != "" && kvKey(last.Replica) != r.me {
			for _, d := range r.lwatch[id] {
				delivers = append(delivers, d)
			}
		}
	default:
		delete(r.holders, id)
	}
	r.lmu.Unlock()
	for _, d := range delivers {
		d([]event.Event{{SessionID: id, Kind: event.TurnEnd, End: &event.End{StopReason: event.StopEndTurn,
			Err: &live.ReplicaLostError{Replica: last.Replica}}}})
	}
}

// Elsewhere implements live.Relay from the session's lease: for a
// session watched here, as the lease watch last saw it (no round trip:
// trackers ask often); for any other, read from the bucket.
func (r *Relay) Elsewhere(id string) (string, bool) {
	r.lmu.Lock()
	if r.lready && r.lwatch[id] != nil {
		h, ok := r.holders[id]
		r.lmu.Unlock()
		if !ok || kvKey(h.Replica) == r.me {
			return "", false
		}
		return h.Replica, true
	}
	r.lmu.Unlock()
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
