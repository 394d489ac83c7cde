package session

import (
	"context"
	"errors"
	"fmt"

	"github.com/openheim/openheim/runtime/message"
)

// Leaser grants a turn its session: Locker does it with lease files in the
// history dir; another store (a KV bucket's leases) can stand in for it.
type Leaser interface {
	// Acquire takes session id for one turn; the error is a *BusyError or
	// a *LockedError when another turn holds it.
	Acquire(id string) (Lease, error)
}

// Lease is one turn's hold on a session. It can be lost while the turn runs:
// a holder that was paused (a laptop asleep, a stopped process) for longer
// than the lease's staleness is taken over by another process, and from
// then on the session is that process's to write.
type Lease interface {
	// Epoch is the lease's fencing token: every acquisition or takeover of
	// a session gets a greater one than the last, as long as the record of
	// the last survives (a file store's lease file lost or unreadable
	// starts the count again: a holder is known by its epoch together
	// with who took it and when, so a repeated number is never mistaken).
	Epoch() uint64
	// Fence runs write only while the lease is still this turn's, atomically
	// with respect to takeovers (no other holder can take the session and
	// write between the check and write's end). Otherwise write is not run
	// and the error is a *LeaseLostError, and Lost is closed.
	Fence(write func() error) error
	// Lost is closed once the lease is found taken over or gone, by a
	// renewal or by Fence; Err then says by whom.
	Lost() <-chan struct{}
	// Err is nil while the lease holds, then a *LeaseLostError.
	Err() error
	// Release gives the session up (only if the lease is still ours); it is
	// idempotent.
	Release()
}

// ErrLeaseLost matches every *LeaseLostError.
var ErrLeaseLost = errors.New("session lease lost")

// LeaseLostError says a turn's lease was taken over (PID and Host name the
// new holder) or is gone (PID 0): the turn was stopped and whatever it had
// not stored yet was not stored.
type LeaseLostError struct {
	SessionID string
	PID       int
	Host      string
	// Unreadable is set when the lease file is there but cannot be read
	// as any holder's.
	Unreadable bool
}

func (e *LeaseLostError) Error() string {
	switch {
	case e.PID > 0:
		return fmt.Sprintf("the session's lease was taken over by pid %d on host %s; this turn was stopped", e.PID, e.Host)
	case e.Unreadable:
		return "the session's lease was replaced by one that cannot be read; this turn was stopped"
	}
	return "the session's lease is gone (another process took the session over and has released it, or the lease was removed); this turn was stopped"
}

// Is makes errors.Is(err, ErrLeaseLost) true.
func (e *LeaseLostError) Is(target error) bool { return target == ErrLeaseLost }

// Unleased is the lease of a turn run without a Leaser (tests, tools that
// own their sessions): it is never lost and fences nothing.
var Unleased Lease = unleased{}

type unleased struct{}

func (unleased) Epoch() uint64                  { return 0 }
func (unleased) Fence(write func() error) error { return write() }
func (unleased) Lost() <-chan struct{}          { return nil }
func (unleased) Err() error                     { return nil }
func (unleased) Release()                       {}

// Fenced returns s with the writes of a turn on session id (Append,
// SaveMeta) made under l's fence, so a turn whose lease was taken over
// stores nothing more. Other sessions' writes pass through.
func Fenced(s Store, id string, l Lease) Store { return &fenced{Store: s, id: id, lease: l} }

type fenced struct {
	Store
	id    string
	lease Lease
}

// Append implements Store.
func (f *fenced) Append(id string, msgs ...message.Message) error {
	if id != f.id {
		return f.Store.Append(id, msgs...)
	}
	return f.lease.Fence(func() error { return f.Store.Append(id, msgs...) })
}

// SaveMeta implements Store.
func (f *fenced) SaveMeta(meta Meta) error {
	if meta.ID != f.id {
		return f.Store.SaveMeta(meta)
	}
	return f.lease.Fence(func() error { return f.Store.SaveMeta(meta) })
}

// LossContext is a Lease whose loss is also a context's end, so a turn
// can watch it without a goroutine of its own.
type LossContext interface {
	// LostContext is done once the lease is lost.
	LostContext() context.Context
}

// LeaseContext returns ctx cancelled once l is lost, with l's error as the
// cause, so the turn stops (its model stream and tools) instead of running
// on for a session it no longer holds. stop frees the watch.
func LeaseContext(ctx context.Context, l Lease) (_ context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	if lc, ok := l.(LossContext); ok {
		unwatch := context.AfterFunc(lc.LostContext(), func() { cancel(l.Err()) })
		return ctx, func() { unwatch(); cancel(context.Canceled) }
	}
	if lost := l.Lost(); lost != nil {
		go func() {
			select {
			case <-lost:
				cancel(l.Err())
			case <-ctx.Done():
			}
		}()
	}
	return ctx, func() { cancel(context.Canceled) }
}
