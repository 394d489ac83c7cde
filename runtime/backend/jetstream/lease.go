package jetstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
)

// holder is a lease's value: who runs the session's turn.
type holder struct {
	Replica    string    `json:"replica"`
	Host       string    `json:"host"`
	PID        int       `json:"pid"`
	AcquiredAt time.Time `json:"acquired_at"`
	// Epoch is the acquisition's revision, written by the first renewal
	// (the revision is known only once the key is created).
	Epoch uint64 `json:"epoch,omitempty"`
}

// leaser grants turns their sessions through the leases bucket.
type leaser struct {
	b *Backend

	mu   sync.Mutex
	held map[string]*lease // the sessions leased by this process
}

var _ session.Leaser = (*leaser)(nil)

// takeoverWindow bounds retrying a Create refused right after the old
// lease expired: on R3 the expiry is not seen by every server at once.
const takeoverWindow = 2 * time.Second

// Acquire implements session.Leaser: *BusyError when this process holds
// the session, *LockedError (naming the holding replica) when another
// does. The new holder then writes a lease marker at the history's tip,
// so a former holder that is still writing is refused from here on.
func (ls *leaser) Acquire(id string) (session.Lease, error) {
	if err := session.ValidateID(id); err != nil {
		return nil, err
	}
	ls.mu.Lock()
	if ls.held[id] != nil {
		ls.mu.Unlock()
		return nil, &session.BusyError{SessionID: id}
	}
	l := &lease{ls: ls, id: id, lost: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	ls.held[id] = l
	ls.mu.Unlock()
	if err := l.take(); err != nil {
		ls.forget(id, l)
		return nil, err
	}
	go l.renewing()
	return l, nil
}

func (ls *leaser) forget(id string, l *lease) {
	ls.mu.Lock()
	if ls.held[id] == l {
		delete(ls.held, id)
	}
	ls.mu.Unlock()
}

// holding is this process's lease on session id, if any.
func (ls *leaser) holding(id string) *lease {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.held[id]
}

// marked is this process's lease on session id and the tip of its mark,
// once the mark is written; nil while the lease is being taken (its tip is
// not known yet) or when none is held here.
func (ls *leaser) marked(id string) (*lease, tip) {
	if l := ls.holding(id); l != nil {
		if at := l.tipNow(); at.seq != 0 {
			return l, at
		}
	}
	return nil, tip{}
}

func (ls *leaser) releaseAll() {
	ls.mu.Lock()
	all := make([]*lease, 0, len(ls.held))
	for _, l := range ls.held {
		all = append(all, l)
	}
	ls.mu.Unlock()
	for _, l := range all {
		l.Release()
	}
}

// Holder returns who holds session id's lease, if anyone does.
func (b *Backend) Holder(id string) (replica string, ok bool) {
	ctx, cancel := b.ctx()
	defer cancel()
	e, err := b.leases.Get(ctx, id)
	if err != nil {
		return "", false
	}
	var h holder
	json.Unmarshal(e.Value(), &h)
	return h.Replica, true
}

// lease is one turn's hold on a session.
type lease struct {
	ls *leaser
	id string
	me holder

	mu      sync.Mutex
	epoch   uint64
	rev     uint64    // the lease key's revision as we last wrote it
	renewed time.Time // when the cluster last acked our lease
	at      tip       // where our writes continue the history
	err     error

	lost              chan struct{}
	loseOnce, relOnce sync.Once
	stop, done        chan struct{}
	paused            bool // tests: renewals stopped
}

var _ session.Lease = (*lease)(nil)

// take creates the lease key, then marks the history.
func (l *lease) take() error {
	b := l.ls.b
	host, _ := os.Hostname()
	l.me = holder{Replica: b.opts.Replica, Host: host, PID: os.Getpid(), AcquiredAt: time.Now().UTC()}
	value, _ := json.Marshal(l.me)
	deadline := time.Now().Add(takeoverWindow)
	for {
		ctx, cancel := b.ctx()
		rev, err := b.leases.Create(ctx, l.id, value, jetstream.KeyTTL(b.opts.LeaseTTL))
		cancel()
		if err == nil {
			l.epoch, l.rev, l.renewed = rev, rev, time.Now()
			break
		}
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return fmt.Errorf("session %s: taking the lease: %w", l.id, err)
		}
		cur, held := l.current()
		if held || time.Now().After(deadline) {
			return &session.LockedError{SessionID: l.id, PID: cur.PID, Host: cur.Replica, AcquiredAt: cur.AcquiredAt}
		}
		time.Sleep(50 * time.Millisecond) // expired, not yet seen everywhere
	}
	if err := l.mark(); err != nil {
		l.deleteKey()
		return fmt.Errorf("session %s: marking the history: %w", l.id, err)
	}
	return nil
}

// current reads the lease key: its holder, and whether it is held.
func (l *lease) current() (holder, bool) {
	ctx, cancel := l.ls.b.ctx()
	defer cancel()
	e, err := l.ls.b.leases.Get(ctx, l.id)
	if err != nil {
		return holder{}, false
	}
	var h holder
	json.Unmarshal(e.Value(), &h)
	return h, true
}

// mark writes the lease marker at the history's tip.
func (l *lease) mark() error {
	b := l.ls.b
	for range 20 {
		ctx, cancel := b.ctx()
		t, err := b.tip(ctx, l.id)
		cancel()
		if err != nil {
			return err
		}
		t, err = b.put(l.id, t, l.epoch, nil, true)
		if err == nil {
			l.mu.Lock()
			l.at = t
			l.mu.Unlock()
			return nil
		}
		if !errors.Is(err, errFenced) {
			return err
		}
	}
	return errors.New("the history kept changing")
}

func (l *lease) tipNow() tip {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.at
}

// append stores a step at our tip; errFenced once another holder wrote.
func (l *lease) append(msgs []message.Message) error {
	if err := l.Err(); err != nil {
		return err
	}
	l.mu.Lock()
	at := l.at
	l.mu.Unlock()
	t, err := l.ls.b.put(l.id, at, l.epoch, msgs, false)
	if errors.Is(err, errFenced) {
		return l.lose()
	}
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.at = t
	l.mu.Unlock()
	return nil
}

// check refuses once the lease key is no longer ours.
func (l *lease) check() error {
	if err := l.Err(); err != nil {
		return err
	}
	e, err := again(func(ctx context.Context) (jetstream.KeyValueEntry, error) { return l.ls.b.leases.Get(ctx, l.id) })
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return l.lose()
	}
	if err != nil {
		return err
	}
	var h holder
	json.Unmarshal(e.Value(), &h)
	if !l.ours(e.Revision(), h) {
		return l.lose()
	}
	return nil
}

// ours says the lease key at revision rev holding h is still this lease:
// its last revision, a value carrying its epoch, or any value it wrote (a
// leader just elected may answer with an older revision of our own key,
// the take's before a renewal: seen at 1,000 sessions on two replicas).
func (l *lease) ours(rev uint64, h holder) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return rev == l.rev || h.Epoch == l.epoch || l.wrote(h)
}

// wrote says h is a value this lease wrote: the take's identity (replica,
// process and time of taking) is its own.
func (l *lease) wrote(h holder) bool {
	return h.Replica == l.me.Replica && h.PID == l.me.PID && h.AcquiredAt.Equal(l.me.AcquiredAt)
}

// Epoch implements session.Lease: the revision that created the lease.
func (l *lease) Epoch() uint64 { return l.epoch }

// Fence implements session.Lease: the write runs unless the lease is
// known lost; a history append it makes is refused by the log itself
// when another holder wrote first (then the lease is lost).
func (l *lease) Fence(write func() error) error {
	if err := l.Err(); err != nil {
		return err
	}
	err := write()
	if errors.Is(err, session.ErrLeaseLost) {
		return l.lose()
	}
	return err
}

// Lost implements session.Lease.
func (l *lease) Lost() <-chan struct{} { return l.lost }

// Err implements session.Lease.
func (l *lease) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// lose marks the lease lost, naming the new holder if there is one.
func (l *lease) lose() error {
	l.loseOnce.Do(func() {
		cur, held := l.current()
		err := &session.LeaseLostError{SessionID: l.id}
		if held && cur.Replica != "" && !l.wrote(cur) {
			err.PID, err.Host = max(cur.PID, 1), cur.Replica
		}
		l.mu.Lock()
		l.err = err
		l.mu.Unlock()
		close(l.lost)
	})
	return l.Err()
}

// renewing renews the lease every TTL/3 until Release; a lease not acked
// for a whole TTL may be someone else's by now, and is lost.
func (l *lease) renewing() {
	defer close(l.done)
	ttl := l.ls.b.opts.LeaseTTL
	t := time.NewTicker(ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-l.lost:
			return
		case <-t.C:
		}
		l.mu.Lock()
		paused, since := l.paused, time.Since(l.renewed)
		l.mu.Unlock()
		if paused {
			continue
		}
		if err := l.renew(); err != nil {
			if isWrongSeq(err) || since > ttl {
				l.lose()
				return
			}
			l.ls.b.warn(fmt.Sprintf("session %s: renewing the lease: %v", l.id, err))
		}
	}
}

// renew republishes the lease with a fresh TTL, if it is still at our
// revision (kv.Update would drop the TTL: the lease would never expire).
func (l *lease) renew() error {
	b := l.ls.b
	l.mu.Lock()
	me, rev := l.me, l.rev
	l.mu.Unlock()
	me.Epoch = l.epoch
	value, _ := json.Marshal(me)
	m := nats.NewMsg("$KV." + b.name("leases") + "." + l.id)
	m.Data = value
	ctx, cancel := b.ctx()
	defer cancel()
	ack, err := b.js.PublishMsg(ctx, m, jetstream.WithExpectLastSequencePerSubject(rev), jetstream.WithMsgTTL(b.opts.LeaseTTL))
	if isWrongSeq(err) {
		// Our last renewal may be what moved the revision, stored but its
		// ack lost to the deadline (a loaded cluster): then the key still
		// holds our value, and we renew from its revision. Only a key seen
		// gone or holding another value loses the lease; a read that fails
		// (an election under way) is tried again at the next renewal.
		e, gerr := b.leases.Get(ctx, l.id)
		switch {
		case errors.Is(gerr, jetstream.ErrKeyNotFound) || errors.Is(gerr, jetstream.ErrKeyDeleted):
		case gerr != nil:
			return fmt.Errorf("reading the lease after its revision moved: %w", gerr)
		case bytes.Equal(e.Value(), value) && e.Revision() != rev:
			ack, err = b.js.PublishMsg(ctx, m, jetstream.WithExpectLastSequencePerSubject(e.Revision()), jetstream.WithMsgTTL(b.opts.LeaseTTL))
		}
	}
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.rev, l.renewed = ack.Sequence, time.Now()
	l.mu.Unlock()
	return nil
}

// Release implements session.Lease: renewals stop and the key is deleted
// if it is still ours.
func (l *lease) Release() {
	l.relOnce.Do(func() {
		close(l.stop)
		<-l.done
		if l.Err() == nil {
			l.deleteKey()
		}
		l.ls.forget(l.id, l)
	})
}

func (l *lease) deleteKey() {
	l.mu.Lock()
	rev := l.rev
	l.mu.Unlock()
	ctx, cancel := l.ls.b.ctx()
	defer cancel()
	if err := l.ls.b.leases.Delete(ctx, l.id, jetstream.LastRevision(rev)); err != nil && !isWrongSeq(err) {
		l.ls.b.warn(fmt.Sprintf("session %s: releasing the lease: %v", l.id, err))
	}
}

// Pause stops renewing the lease, as if its process were frozen (tests
// of takeovers).
func Pause(sl session.Lease) {
	if l, ok := sl.(*lease); ok {
		l.mu.Lock()
		l.paused = true
		l.mu.Unlock()
	}
}
