package backendtest

import (
	"errors"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
)

func testLeases(t *testing.T, h Harness) {
	t.Run("OneHolder", func(t *testing.T) {
		first, peer := h.Open(t)
		m := newSession(t, first.Sessions(), "leased")
		l1, err := first.Leaser().Acquire(m.ID)
		if err != nil {
			t.Fatal(err)
		}
		var busy *session.BusyError
		if _, err := first.Leaser().Acquire(m.ID); !errors.As(err, &busy) {
			t.Fatalf("second acquire in one process: %v", err)
		}
		var locked *session.LockedError
		if _, err := peer.Leaser().Acquire(m.ID); !errors.As(err, &locked) || locked.Host == "" {
			t.Fatalf("acquire by a peer: %v", err)
		}
		fenced := session.Fenced(first.Sessions(), m.ID, l1)
		if err := fenced.Append(m.ID, text(message.RoleUser, "held")); err != nil {
			t.Fatal(err)
		}
		l1.Release()
		l1.Release() // idempotent
		l2, err := peer.Leaser().Acquire(m.ID)
		if err != nil {
			t.Fatalf("acquire after release: %v", err)
		}
		defer l2.Release()
		if l2.Epoch() <= l1.Epoch() {
			t.Fatalf("epochs %d then %d", l1.Epoch(), l2.Epoch())
		}
		if err := session.Fenced(peer.Sessions(), m.ID, l2).Append(m.ID, text(message.RoleAssistant, "next")); err != nil {
			t.Fatal(err)
		}
		if got := texts(t, first.Sessions(), m.ID); len(got) != 2 || got[1] != "next" {
			t.Fatalf("history %q", got)
		}
	})
	t.Run("PausedHolderFenced", func(t *testing.T) { testTakeover(t, h) })
	t.Run("InvalidID", func(t *testing.T) {
		first, _ := h.Open(t)
		if _, err := first.Leaser().Acquire("nope"); !errors.Is(err, session.ErrInvalidID) {
			t.Fatalf("acquire of a bad id: %v", err)
		}
	})
}

// testTakeover: a holder paused past its lease is taken over; from then
// on none of its writes is stored, and it learns its lease is lost.
func testTakeover(t *testing.T, h Harness) {
	first, peer := h.Open(t)
	m := newSession(t, first.Sessions(), "taken over")
	l1, err := first.Leaser().Acquire(m.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer l1.Release()
	stale := session.Fenced(first.Sessions(), m.ID, l1)
	if err := stale.Append(m.ID, text(message.RoleUser, "before")); err != nil {
		t.Fatal(err)
	}
	h.Expire(t, l1)
	var l2 session.Lease
	deadline := time.Now().Add(h.Takeover)
	for {
		l2, err = peer.Leaser().Acquire(m.ID)
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("takeover: %v", err)
	}
	defer l2.Release()
	if l2.Epoch() <= l1.Epoch() {
		t.Fatalf("takeover epoch %d after %d", l2.Epoch(), l1.Epoch())
	}
	// The paused holder wakes and writes: refused, not stored.
	err = stale.Append(m.ID, text(message.RoleAssistant, "stale"))
	if !errors.Is(err, session.ErrLeaseLost) {
		t.Fatalf("stale append: %v", err)
	}
	select {
	case <-l1.Lost():
	case <-time.After(5 * time.Second):
		t.Fatal("Lost not closed")
	}
	if l1.Err() == nil {
		t.Fatal("Err nil after the lease was lost")
	}
	if err := session.Fenced(peer.Sessions(), m.ID, l2).Append(m.ID, text(message.RoleAssistant, "new holder")); err != nil {
		t.Fatal(err)
	}
	if got := texts(t, peer.Sessions(), m.ID); len(got) != 2 || got[0] != "before" || got[1] != "new holder" {
		t.Fatalf("history %q", got)
	}
}
