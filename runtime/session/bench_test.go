package session

import (
	"fmt"
	"slices"
	"strings"
	"sync"
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

// BenchmarkTurnStarts is 1,000 turns of 1,000 sessions starting at once, as
// a server's turns do when 1,000 prompts arrive together: each takes its
// session's lease, stores the user's message (its first fenced append),
// then two steps and its meta, and gives the lease back. first-p99-ms is
// the time to the first stored message, what delays a turn's first
// update. The floor (unleased) is the same appends and meta writes with no
// lease: what the fsyncs alone cost on this disk.
func BenchmarkTurnStarts(b *testing.B) {
	for _, leased := range []bool{false, true} {
		name := "unleased"
		if leased {
			name = "leased"
		}
		b.Run(name, func(b *testing.B) { turnStarts(b, 1000, leased) })
	}
}

func turnStarts(b *testing.B, n int, leased bool) {
	var first []time.Duration
	var wall time.Duration
	for b.Loop() {
		b.StopTimer()
		s, _ := NewFileStore(b.TempDir())
		locker := &Locker{Dir: s.Dir}
		metas := make([]Meta, n)
		for i := range metas {
			metas[i] = NewMeta(time.Now())
			if err := s.Create(metas[i]); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		lat := make([]time.Duration, n)
		var wg sync.WaitGroup
		start := time.Now()
		for i, m := range metas {
			wg.Go(func() {
				var st Store = s
				if leased {
					l, err := locker.Acquire(m.ID)
					if err != nil {
						b.Error(err)
						return
					}
					defer l.Release()
					st = Fenced(s, m.ID, l)
				}
				if err := st.Append(m.ID, benchMessage(0)); err != nil {
					b.Error(err)
					return
				}
				lat[i] = time.Since(start)
				for j := 1; j < 3; j++ {
					if err := st.Append(m.ID, benchMessage(j)); err != nil {
						b.Error(err)
						return
					}
				}
				if err := st.SaveMeta(m); err != nil {
					b.Error(err)
				}
			})
		}
		wg.Wait()
		wall += time.Since(start)
		first = append(first, lat...)
	}
	slices.Sort(first)
	b.ReportMetric(float64(first[len(first)/2].Microseconds())/1000, "first-p50-ms")
	b.ReportMetric(float64(first[len(first)*99/100].Microseconds())/1000, "first-p99-ms")
	b.ReportMetric(wall.Seconds()*1000/float64(b.N), "wall-ms")
}
