package jetstream_test

import (
	"fmt"
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
