package jetstream_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/openheim/openheim/runtime/backend/jetstream"
	"github.com/openheim/openheim/runtime/backend/jetstream/natstest"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/live"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
)

func openT(t *testing.T, url, replica string) *jetstream.Backend {
	t.Helper()
	be, err := jetstream.Open(context.Background(), jetstream.Options{URL: url, Replica: replica})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { be.Close() })
	return be
}

// rawMsgs returns the sizes of the NATS messages on a session's event
// subject, as a third party sees them; call it once the watcher had all.
func rawMsgs(t *testing.T, url, id string) (sizes func() []int) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	sub, err := nc.SubscribeSync(jetstream.DefaultPrefix + ".ev." + id)
	if err != nil {
		t.Fatal(err)
	}
	nc.Flush()
	return func() []int {
		// What the server sent before answering the flush is queued here.
		nc.Flush()
		var got []int
		for {
			m, err := sub.NextMsg(50 * time.Millisecond)
			if err != nil {
				return got
			}
			got = append(got, len(m.Data))
		}
	}
}

// deliveries records what a Watch delivers, one slice per call.
type deliveries struct {
	mu    sync.Mutex
	calls [][]event.Event
	more  chan struct{}
}

func newDeliveries() *deliveries { return &deliveries{more: make(chan struct{}, 1000)} }

func (d *deliveries) deliver(evs []event.Event) {
	d.mu.Lock()
	d.calls = append(d.calls, append([]event.Event(nil), evs...))
	d.mu.Unlock()
	d.more <- struct{}{}
}

func (d *deliveries) events() []event.Event {
	d.mu.Lock()
	defer d.mu.Unlock()
	var all []event.Event
	for _, c := range d.calls {
		all = append(all, c...)
	}
	return all
}

func (d *deliveries) waitFor(t *testing.T, n int) []event.Event {
	t.Helper()
	for {
		if evs := d.events(); len(evs) >= n {
			return evs
		}
		select {
		case <-d.more:
		case <-time.After(10 * time.Second):
			t.Fatalf("%d of %d events delivered", len(d.events()), n)
		}
	}
}

// TestRelayPublishesOneMessagePerDelivery: the events a turn's queue
// delivers at once cross as one message and reach the other replica's
// watcher in one call, in order; the publishing replica's own watch never
// gets them back.
func TestRelayPublishesOneMessagePerDelivery(t *testing.T) {
	c := natstest.Single(t)
	ba, bb := openT(t, c.URL(), "A"), openT(t, c.URL(), "B")
	id := session.NewMeta(time.Now()).ID
	sizes := rawMsgs(t, c.URL(), id)
	onA, onB := newDeliveries(), newDeliveries()
	defer ba.Relay().Watch(id, onA.deliver)()
	defer bb.Relay().Watch(id, onB.deliver)()
	ba.Conn().Flush()
	bb.Conn().Flush()

	var evs []event.Event
	for i := range 100 {
		evs = append(evs, event.Text(id, event.AgentMessageChunk, fmt.Sprint(i, " ")))
	}
	evs = append(evs, event.Event{SessionID: id, Kind: event.Committed, Index: 3,
		Messages: []message.Message{{Role: message.RoleAssistant, Content: []message.Block{message.Text("done")}}}})
	ba.Relay().Publish(evs)
	got := onB.waitFor(t, len(evs))
	if n := len(onB.calls); n != 1 {
		t.Errorf("B's watcher was called %d times for one delivery", n)
	}
	if n := len(sizes()); n != 1 {
		t.Errorf("%d NATS messages for one delivery", n)
	}
	for i, e := range got[:100] {
		if e.Content.Text != fmt.Sprint(i, " ") {
			t.Fatalf("event %d is %q: out of order", i, e.Content.Text)
		}
	}
	if last := got[100]; last.Kind != event.Committed || last.Index != 3 || last.Messages[0].JoinText() != "done" {
		t.Fatalf("last event %+v", last)
	}

	// A's own events would have reached A before the server answered
	// this flush, so before anything B publishes next.
	ba.Conn().Flush()
	bb.Relay().Publish([]event.Event{{SessionID: id, Kind: event.Dropped, Count: 1}})
	if fromA := onA.waitFor(t, 1); len(fromA) != 1 || fromA[0].Kind != event.Dropped {
		t.Fatalf("A's watch got %d events (its own echoed back?), first %s", len(fromA), fromA[0].Kind)
	}
}

// TestRelaySplitsAtMaxPayload: on a server whose max_payload is small, a
// delivery larger than it goes as several messages, each within it, the
// events in order; an event too large alone becomes a Dropped notice in
// its place, and a TurnEnd too large (its error) still ends the turn, its
// error cut short.
func TestRelaySplitsAtMaxPayload(t *testing.T) {
	const max = 4096
	s := smallPayloadServer(t, max)
	ba, bb := openT(t, s.ClientURL(), "A"), openT(t, s.ClientURL(), "B")
	id := session.NewMeta(time.Now()).ID
	sizes := rawMsgs(t, s.ClientURL(), id)
	onB := newDeliveries()
	defer bb.Relay().Watch(id, onB.deliver)()
	bb.Conn().Flush()

	var evs []event.Event
	var want strings.Builder
	for i := range 30 {
		text := strings.Repeat(string(rune('a'+i)), 1000)
		want.WriteString(text)
		evs = append(evs, event.Text(id, event.AgentMessageChunk, text))
		if i == 10 {
			evs = append(evs, event.Text(id, event.AgentMessageChunk, strings.Repeat("x", 2*max)))
		}
	}
	evs = append(evs, event.Event{SessionID: id, Kind: event.TurnEnd,
		End: &event.End{StopReason: event.StopEndTurn, Err: fmt.Errorf("%s", strings.Repeat("e", 2*max))}})
	ba.Relay().Publish(evs)
	got := onB.waitFor(t, len(evs))
	var text strings.Builder
	var kinds []string
	for _, e := range got {
		switch e.Kind {
		case event.AgentMessageChunk:
			text.WriteString(e.Content.Text)
		default:
			kinds = append(kinds, fmt.Sprintf("%s@%d", e.Kind, len(kinds)+text.Len()/1000))
		}
	}
	if text.String() != want.String() {
		t.Error("the chunks did not arrive whole and in order")
	}
	if k := strings.Join(kinds, ","); k != "dropped@11,turn_end@31" {
		t.Errorf("stand-ins %s, want dropped@11,turn_end@31", k)
	}
	if end := got[len(got)-1]; end.End == nil || end.End.Err == nil || len(end.End.Err.Error()) >= 2*max {
		t.Errorf("turn end %+v: its error must be there, cut short", end.End)
	}
	ms := sizes()
	if len(ms) < 8 {
		t.Errorf("%d messages for ~30 KB at %d bytes each", len(ms), max)
	}
	for _, n := range ms {
		if n > max {
			t.Errorf("a message of %d bytes, past max_payload %d", n, max)
		}
	}
}

// sink records a watcher's updates: the text, and the other kinds in
// order.
type sink struct {
	mu    sync.Mutex
	text  strings.Builder
	kinds []string
	end   chan struct{}
}

func (s *sink) Emit(ev event.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ev.Kind == event.AgentMessageChunk {
		s.text.WriteString(ev.Content.Text)
		return
	}
	s.kinds = append(s.kinds, string(ev.Kind))
	if ev.Kind == event.TurnEnd {
		close(s.end)
	}
}

// TestRelayTurnWatchedOnBothReplicas: a turn on A emitting as fast as it
// can (its queue delivers in batches) is seen whole and in order by a
// watcher on A and one on B; A's sees each update once.
func TestRelayTurnWatchedOnBothReplicas(t *testing.T) {
	c := natstest.Single(t)
	ba, bb := openT(t, c.URL(), "A"), openT(t, c.URL(), "B")
	ha, hb := live.NewHub(context.Background(), nil), live.NewHub(context.Background(), nil)
	defer ha.Stop()
	defer hb.Stop()
	ha.SetRelay(ba.Relay())
	hb.SetRelay(bb.Relay())
	id := session.NewMeta(time.Now()).ID
	wa, wb := &sink{end: make(chan struct{})}, &sink{end: make(chan struct{})}
	ha.Subscribe(id, wa)
	hb.Subscribe(id, wb)
	ba.Conn().Flush()
	bb.Conn().Flush()
	var want strings.Builder
	done, err := ha.Run(id, nil, func(ctx context.Context, s event.Sink) (event.End, error) {
		for i := range 2000 {
			text := fmt.Sprint(i, " ")
			want.WriteString(text)
			s.Emit(event.Text(id, event.AgentMessageChunk, text))
			if i == 1000 {
				s.Emit(event.Event{SessionID: id, Kind: event.Committed, Index: 1})
			}
		}
		return event.End{StopReason: event.StopEndTurn}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	<-done
	for name, w := range map[string]*sink{"A": wa, "B": wb} {
		select {
		case <-w.end:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s never saw the turn end", name)
		}
		w.mu.Lock()
		if w.text.String() != want.String() {
			t.Errorf("%s saw %d bytes of text, want %d: lost, doubled or out of order", name, w.text.Len(), want.Len())
		}
		if k := strings.Join(w.kinds, ","); k != "turn_start,committed,turn_end" {
			t.Errorf("%s saw %s", name, k)
		}
		w.mu.Unlock()
	}
}

// TestRelayCommittedTooLarge: a committed message larger than a NATS
// message may be reaches the watchers on another replica whole, read from
// the store, in its place among the others (the sessions API names items
// by that place); a user's input too large for a TurnStart keeps the
// turn's start with a note.
func TestRelayCommittedTooLarge(t *testing.T) {
	const max = 4096
	s := smallPayloadServer(t, max)
	ba, bb := openT(t, s.ClientURL(), "A"), openT(t, s.ClientURL(), "B")
	m := session.NewMeta(time.Now())
	if err := ba.Sessions().Create(m); err != nil {
		t.Fatal(err)
	}
	msg := func(role message.Role, text string) message.Message {
		return message.Message{Role: role, Content: []message.Block{message.Text(text)}}
	}
	big := strings.Repeat("large ", 3*max/6)
	stored := []message.Message{msg(message.RoleUser, big), msg(message.RoleAssistant, "small"), msg(message.RoleAssistant, big+"2")}
	if err := ba.Sessions().Append(m.ID, stored...); err != nil {
		t.Fatal(err)
	}
	onB := newDeliveries()
	defer bb.Relay().Watch(m.ID, onB.deliver)()
	bb.Conn().Flush()

	ba.Relay().Publish([]event.Event{
		{SessionID: m.ID, Kind: event.TurnStart, Messages: stored[:1]},
		{SessionID: m.ID, Kind: event.Committed, Index: 0, Messages: stored},
		{SessionID: m.ID, Kind: event.TurnEnd, End: &event.End{StopReason: event.StopEndTurn}},
	})
	got := onB.waitFor(t, 5)
	var kinds []string
	for _, e := range got {
		kinds = append(kinds, string(e.Kind))
	}
	if k := strings.Join(kinds, ","); k != "turn_start,committed,committed,committed,turn_end" {
		t.Fatalf("events on B: %s", k)
	}
	if start := got[0]; len(start.Messages) != 1 || !strings.Contains(start.Messages[0].JoinText(), "too large to relay") {
		t.Errorf("turn start %+v: want the note in place of the input", start.Messages)
	}
	for i, e := range got[1:4] {
		if e.Index != i || len(e.Messages) != 1 || e.Messages[0].JoinText() != stored[i].JoinText() || e.Messages[0].Role != stored[i].Role || e.Count != 0 {
			t.Errorf("committed %d on B: index %d, %d messages, count %d", i, e.Index, len(e.Messages), e.Count)
		}
	}
	// A watcher behind: the message is no longer in the history's last
	// entry, and is read from the whole history.
	if err := ba.Sessions().Append(m.ID, msg(message.RoleUser, "later")); err != nil {
		t.Fatal(err)
	}
	ba.Relay().Publish([]event.Event{{SessionID: m.ID, Kind: event.Committed, Index: 2, Messages: stored[2:]}})
	got = onB.waitFor(t, 6)
	if e := got[5]; e.Kind != event.Committed || e.Index != 2 || len(e.Messages) != 1 || e.Messages[0].JoinText() != stored[2].JoinText() {
		t.Errorf("committed 2 again on B: %s at %d with %d messages", e.Kind, e.Index, len(e.Messages))
	}
}

// smallPayloadServer starts a one-node JetStream server whose messages are
// at most max bytes.
func smallPayloadServer(t *testing.T, max int32) *server.Server {
	t.Helper()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, MaxPayload: max,
		StoreDir: filepath.Join(t.TempDir(), "js"), NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("server did not start")
	}
	t.Cleanup(s.Shutdown)
	return s
}
