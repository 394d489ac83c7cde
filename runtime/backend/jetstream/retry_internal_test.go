package jetstream

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/openheim/openheim/runtime/backend/jetstream/natstest"
	"github.com/openheim/openheim/runtime/session"
)

// TestInProcessRetried: an append whose earlier attempt is still being
// stored (10158, seen under load in serve-cluster.sh) is tried again,
// not failed; another conflict is not.
func TestInProcessRetried(t *testing.T) {
	conflict := fmt.Errorf("publish: %w", &jetstream.APIError{Code: 409, ErrorCode: errCodeDuplicateInProcess, Description: "duplicate message id is in process"})
	if !inProcess(conflict) {
		t.Error("10158 is not retried")
	}
	if inProcess(&jetstream.APIError{Code: 400, ErrorCode: jetstream.JSErrCodeStreamWrongLastSequence}) || inProcess(fmt.Errorf("other")) {
		t.Error("other errors are taken for 10158")
	}
}

// TestRenewAfterLostAck: a renewal stored but whose ack was lost (a
// loaded cluster) moved the lease's revision; the next renewal finds our
// own value there and goes on, where it used to take the lease for lost
// and stop the turn ("the session's lease is gone", serve-cluster.sh).
func TestRenewAfterLostAck(t *testing.T) {
	b, err := Open(context.Background(), Options{URL: natstest.Single(t).URL(), Replica: "A", Replicas: 1, LeaseTTL: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	m := session.NewMeta(time.Now())
	if err := b.Sessions().Create(m); err != nil {
		t.Fatal(err)
	}
	sl, err := b.Leaser().Acquire(m.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer sl.Release()
	l := sl.(*lease)
	if err := l.renew(); err != nil { // writes the epoch, as the first renewal does
		t.Fatal(err)
	}
	l.mu.Lock()
	me, rev := l.me, l.rev
	me.Epoch = l.epoch
	l.mu.Unlock()
	value, _ := json.Marshal(me)
	msg := nats.NewMsg("$KV." + b.name("leases") + "." + l.id)
	msg.Data = value
	// The renewal whose ack never came back.
	if _, err := b.js.PublishMsg(context.Background(), msg, jetstream.WithExpectLastSequencePerSubject(rev), jetstream.WithMsgTTL(3*time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := l.renew(); err != nil {
		t.Fatalf("renewal after a lost ack: %v", err)
	}
	// Someone else's value is still a takeover.
	msg.Data = []byte(`{"replica":"B"}`)
	l.mu.Lock()
	rev = l.rev
	l.mu.Unlock()
	if _, err := b.js.PublishMsg(context.Background(), msg, jetstream.WithExpectLastSequencePerSubject(rev), jetstream.WithMsgTTL(3*time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := l.renew(); !isWrongSeq(err) {
		t.Fatalf("renewal over another holder: %v", err)
	}
}

// A lease read back at an older revision of its own key (a new leader not
// caught up) is still ours; another holder's value, or ours from another
// taking, is not.
func TestLeaseOursAtAnOlderRevision(t *testing.T) {
	at := time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)
	l := &lease{me: holder{Replica: "A", PID: 7, AcquiredAt: at}, epoch: 10, rev: 12}
	cases := []struct {
		rev  uint64
		h    holder
		want bool
	}{
		{12, holder{Replica: "B", PID: 9, AcquiredAt: at}, true},                   // our last revision
		{11, holder{Replica: "A", PID: 7, AcquiredAt: at, Epoch: 10}, true},        // a renewal's value
		{10, holder{Replica: "A", PID: 7, AcquiredAt: at}, true},                   // the take's value, read stale
		{13, holder{Replica: "B", PID: 9, AcquiredAt: at.Add(time.Second)}, false}, // taken over
		{13, holder{Replica: "A", PID: 7, AcquiredAt: at.Add(time.Second)}, false}, // our process, another taking
	}
	for i, c := range cases {
		if got := l.ours(c.rev, c.h); got != c.want {
			t.Errorf("case %d: ours = %v, want %v", i, got, c.want)
		}
	}
}
