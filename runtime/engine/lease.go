package engine

import (
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/session"
)

// Lease takes session id for one turn: the Locker's lease, or
// session.Unleased when the engine runs unlocked.
func (e *Engine) Lease(id string) (session.Lease, error) {
	if e.Locker == nil {
		return session.Unleased, nil
	}
	return e.Locker.Acquire(id)
}

// LeaseEnd makes a turn whose lease was lost end with that error, whatever
// the loop made of it (a cancelled stream, a refused save): the turn failed,
// and front ends say so (prompt exits 1 with the error).
func LeaseEnd(end event.End, l session.Lease) event.End {
	if err := l.Err(); err != nil {
		end.StopReason = event.StopEndTurn
		end.Err = err
	}
	return end
}
