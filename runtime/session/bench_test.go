package session

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/message"
)

// benchMessage is a typical stored message: ~30 words of text.
func benchMessage(i int) message.Message {
	role := message.RoleUser
	if i%2 == 1 {
		role = message.RoleAssistant
	}
	return message.Message{Role: role, Content: []message.Block{message.Text(fmt.Sprintf("message %d: %s", i,
		strings.Repeat("the quick brown fox jumps over the lazy dog ", 3)))}}
}

// BenchmarkLoad10k loads a session of 10,000 messages (target < 100 ms).
func BenchmarkLoad10k(b *testing.B) {
	s, _ := NewFileStore(b.TempDir())
	m := NewMeta(time.Now())
	s.Create(m)
	msgs := make([]message.Message, 10_000)
	for i := range msgs {
		msgs[i] = benchMessage(i)
	}
	if err := s.Append(m.ID, msgs...); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		conv, err := s.Load(m.ID)
		if err != nil || len(conv.Messages) != 10_000 {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppend appends one message with its fsync (target < 1 ms plus
// the fsync); BenchmarkAppendNoSync shows the part that is ours.
func BenchmarkAppend(b *testing.B) {
	s, _ := NewFileStore(b.TempDir())
	m := NewMeta(time.Now())
	s.Create(m)
	msg := benchMessage(1)
	b.ResetTimer()
	for b.Loop() {
		if err := s.Append(m.ID, msg); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendFenced is BenchmarkAppend as a turn makes it: under its
// lease's fence (the session's flock, a read of the lease file).
func BenchmarkAppendFenced(b *testing.B) {
	s, _ := NewFileStore(b.TempDir())
	m := NewMeta(time.Now())
	s.Create(m)
	lease, err := (&Locker{Dir: s.Dir}).Acquire(m.ID)
	if err != nil {
		b.Fatal(err)
	}
	defer lease.Release()
	fenced := Fenced(s, m.ID, lease)
	msg := benchMessage(1)
	b.ResetTimer()
	for b.Loop() {
		if err := fenced.Append(m.ID, msg); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFence is the fence alone, around a write that does nothing: the
// cost the lease check adds to every append.
func BenchmarkFence(b *testing.B) {
	s, _ := NewFileStore(b.TempDir())
	m := NewMeta(time.Now())
	s.Create(m)
	lease, err := (&Locker{Dir: s.Dir}).Acquire(m.ID)
	if err != nil {
		b.Fatal(err)
	}
	defer lease.Release()
	b.ResetTimer()
	for b.Loop() {
		if err := lease.Fence(func() error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAcquireRelease takes a session's lease and gives it back, what
// every turn pays besides its fenced writes.
func BenchmarkAcquireRelease(b *testing.B) {
	s, _ := NewFileStore(b.TempDir())
	m := NewMeta(time.Now())
	s.Create(m)
	l := &Locker{Dir: s.Dir}
	b.ResetTimer()
	for b.Loop() {
		lease, err := l.Acquire(m.ID)
		if err != nil {
			b.Fatal(err)
		}
		lease.Release()
	}
}
