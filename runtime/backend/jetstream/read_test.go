package jetstream_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/backend/jetstream/natstest"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
)

// TestHistoryReadShortAndLong: a history is read whole and in order,
// entry by entry when it is short and through a consumer when it is long
// (over 64 messages), by a turn holding the lease and by a reader that
// does not, across turns with their lease marks in between; a session
// with no message yet loads empty.
func TestHistoryReadShortAndLong(t *testing.T) {
	b := open(t, natstest.Single(t).URL(), "A", 1)
	m := session.NewMeta(time.Now())
	if err := b.Sessions().Create(m); err != nil {
		t.Fatal(err)
	}
	text := func(i int) message.Message {
		return message.Message{Role: message.RoleUser, Content: []message.Block{message.Text(fmt.Sprint("m", i))}}
	}
	check := func(what string, msgs []message.Message, n int) {
		t.Helper()
		if len(msgs) != n {
			t.Fatalf("%s: %d messages, want %d", what, len(msgs), n)
		}
		for i, msg := range msgs {
			if msg.JoinText() != fmt.Sprint("m", i) {
				t.Fatalf("%s: message %d is %q", what, i, msg.JoinText())
			}
		}
	}
	n := 0
	for turn := range 8 { // 8 turns of 12 entries: 96 messages
		l, err := b.Leaser().Acquire(m.ID)
		if err != nil {
			t.Fatal(err)
		}
		s := session.Fenced(b.Sessions(), m.ID, l)
		conv, err := s.Load(m.ID)
		if err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("turn %d, holding", turn), conv.Messages, n)
		for range 12 {
			if err := s.Append(m.ID, text(n)); err != nil {
				t.Fatal(err)
			}
			n++
		}
		l.Release()
		conv, err = b.Sessions().Load(m.ID)
		if err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("after turn %d", turn), conv.Messages, n)
	}
	if msg, err := b.Sessions().LoadMessage(m.ID, 90); err != nil || msg.JoinText() != "m90" {
		t.Fatalf("LoadMessage: %v %v", msg, err)
	}
}

// TestLoadWhileALeaseIsTaken: a reader in the process taking the lease
// reads the whole history while the lease is being taken (before its mark
// is written, its tip is not yet known): never an empty one.
func TestLoadWhileALeaseIsTaken(t *testing.T) {
	b := open(t, natstest.Single(t).URL(), "A", 1)
	m := session.NewMeta(time.Now())
	if err := b.Sessions().Create(m); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := b.Sessions().Append(m.ID, message.Message{Role: message.RoleUser, Content: []message.Block{message.Text("x")}}); err != nil {
			t.Fatal(err)
		}
	}
	var stop atomic.Bool
	var wrong, total atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			if c, err := b.Sessions().Load(m.ID); err == nil {
				total.Add(1)
				if len(c.Messages) != 3 {
					wrong.Add(1)
				}
			}
		}
	}()
	for range 200 {
		l, err := b.Leaser().Acquire(m.ID)
		if err != nil {
			t.Fatal(err)
		}
		l.Release()
	}
	stop.Store(true)
	<-done
	if wrong.Load() > 0 || total.Load() == 0 {
		t.Errorf("%d of %d loads saw a wrong history", wrong.Load(), total.Load())
	}
}

// TestLoadMessageFromTheLastEntry: a message read alone comes from the
// history's last entry when it is there (an entry of several messages,
// not the first), else from the whole history, before and after a lease
// marker ends the history.
func TestLoadMessageFromTheLastEntry(t *testing.T) {
	b := open(t, natstest.Single(t).URL(), "A", 1)
	m := session.NewMeta(time.Now())
	if err := b.Sessions().Create(m); err != nil {
		t.Fatal(err)
	}
	text := func(s string) message.Message {
		return message.Message{Role: message.RoleUser, Content: []message.Block{message.Text(s)}}
	}
	if err := b.Sessions().Append(m.ID, text("a")); err != nil {
		t.Fatal(err)
	}
	if err := b.Sessions().Append(m.ID, text("b"), text("c")); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		for i, want := range []string{"a", "b", "c"} {
			if msg, err := b.Sessions().LoadMessage(m.ID, i); err != nil || msg.JoinText() != want {
				t.Errorf("%s: message %d: %q %v, want %q", when, i, msg.JoinText(), err, want)
			}
		}
		if _, err := b.Sessions().LoadMessage(m.ID, 3); err == nil {
			t.Errorf("%s: message 3 of 3 was found", when)
		}
	}
	check("after the appends")
	l, err := b.Leaser().Acquire(m.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	check("with a lease marker last")
}
