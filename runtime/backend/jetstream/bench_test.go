package jetstream_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/backend"
	"github.com/openheim/openheim/runtime/backend/jetstream"
	"github.com/openheim/openheim/runtime/backend/jetstream/natstest"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/live"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
)

// A step as a turn appends it: an assistant message of a few hundred
// bytes.
var step = message.Message{Role: message.RoleAssistant, Content: []message.Block{message.Text(strings.Repeat("lorem ipsum ", 40))}}

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return d[min(len(d)-1, int(float64(len(d))*p))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// leased opens a session on be and leases it, as a turn does.
func leased(b *testing.B, be backend.Backend) (string, session.Store, func()) {
	m := session.NewMeta(time.Now())
	if err := be.Sessions().Create(m); err != nil {
		b.Fatal(err)
	}
	l, err := be.Leaser().Acquire(m.ID)
	if err != nil {
		b.Fatal(err)
	}
	return m.ID, session.Fenced(be.Sessions(), m.ID, l), l.Release
}

// stores are what the append benchmarks compare: the file store (an
// fsync per step: the floor of one machine), one node, three nodes.
func stores(b *testing.B) []struct {
	name string
	open func(*testing.B) backend.Backend
} {
	return []struct {
		name string
		open func(*testing.B) backend.Backend
	}{
		{"files", func(b *testing.B) backend.Backend {
			fb, err := backend.OpenFiles(b.TempDir(), nil)
			if err != nil {
				b.Fatal(err)
			}
			return fb
		}},
		{"R1", func(b *testing.B) backend.Backend { return openB(b, natstest.Single(b).URL(), "bench", 1) }},
		{"R3", func(b *testing.B) backend.Backend { return openB(b, natstest.Three(b).URL(), "bench", 3) }},
	}
}

// BenchmarkAppend: one acked step append, one turn at a time (the goal on
// R3: p99 <= 5 ms).
func BenchmarkAppend(b *testing.B) {
	for _, st := range stores(b) {
		b.Run(st.name, func(b *testing.B) {
			id, s, release := leased(b, st.open(b))
			defer release()
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				t := time.Now()
				if err := s.Append(id, step); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t))
			}
			b.StopTimer()
			b.ReportMetric(ms(percentile(lat, 0.5)), "p50-ms")
			b.ReportMetric(ms(percentile(lat, 0.99)), "p99-ms")
		})
	}
}

// BenchmarkAppend32Sessions: 32 turns appending at once (the goal on R3:
// >= 5,000 appends/s).
func BenchmarkAppend32Sessions(b *testing.B) {
	for _, st := range stores(b) {
		b.Run(st.name, func(b *testing.B) { append32(b, st.open(b)) })
	}
}

func append32(b *testing.B, be backend.Backend) {
	const sessions = 32
	type turn struct {
		id      string
		s       session.Store
		release func()
	}
	var turns []turn
	for range sessions {
		id, s, release := leased(b, be)
		turns = append(turns, turn{id, s, release})
	}
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for i, tr := range turns {
		n := b.N / sessions
		if i < b.N%sessions {
			n++
		}
		wg.Go(func() {
			mine := make([]time.Duration, 0, n)
			for range n {
				t := time.Now()
				if err := tr.s.Append(tr.id, step); err != nil {
					b.Error(err)
					return
				}
				mine = append(mine, time.Since(t))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	el := time.Since(start)
	b.StopTimer()
	for _, tr := range turns {
		tr.release()
	}
	b.ReportMetric(float64(len(lat))/el.Seconds(), "appends/s")
	b.ReportMetric(ms(percentile(lat, 0.99)), "p99-ms")
}

// stamped is a watcher recording how long each update took from its emit
// (the time is its text, followed by a space) to here. A watcher that is
// behind gets text runs merged: each time in a merged chunk counts.
type stamped struct {
	mu  sync.Mutex
	lat []time.Duration
	end chan struct{}
}

func (s *stamped) Emit(ev event.Event) {
	switch {
	case ev.Kind == event.AgentMessageChunk && ev.Content != nil:
		now := time.Now()
		s.mu.Lock()
		for _, f := range strings.Fields(ev.Content.Text) {
			ns, _ := strconv.ParseInt(f, 10, 64)
			s.lat = append(s.lat, now.Sub(time.Unix(0, ns)))
		}
		s.mu.Unlock()
	case ev.Kind == event.TurnEnd:
		close(s.end)
	}
}

// BenchmarkRelayAddedLatency: a turn on replica A emits updates; a
// watcher on A and one on B (through the relay, over a route of the
// three-node cluster) record each one's delay. The goal: B's p99 at most
// 2 ms over A's.
func BenchmarkRelayAddedLatency(b *testing.B) {
	c := natstest.Three(b)
	ba, bb := openB(b, c.URL(), "A", 3), openB(b, c.URL(), "B", 3)
	ha, hb := live.NewHub(context.Background(), nil), live.NewHub(context.Background(), nil)
	defer ha.Stop()
	defer hb.Stop()
	ha.SetRelay(ba.Relay())
	hb.SetRelay(bb.Relay())
	id := session.NewMeta(time.Now()).ID
	wa, wb := &stamped{end: make(chan struct{})}, &stamped{end: make(chan struct{})}
	ha.Subscribe(id, wa)
	hb.Subscribe(id, wb)
	time.Sleep(100 * time.Millisecond) // B's subscription reaches every server
	b.ResetTimer()
	done, err := ha.Run(id, nil, func(ctx context.Context, sink event.Sink) (event.End, error) {
		for range b.N {
			sink.Emit(event.Text(id, event.AgentMessageChunk, fmt.Sprint(time.Now().UnixNano(), " ")))
			time.Sleep(100 * time.Microsecond) // a model's pace, not a flood
		}
		return event.End{StopReason: event.StopEndTurn}, nil
	})
	if err != nil {
		b.Fatal(err)
	}
	<-done
	<-wa.end
	<-wb.end
	b.StopTimer()
	if len(wb.lat) != b.N {
		b.Fatalf("B saw %d of %d updates", len(wb.lat), b.N)
	}
	pa, pb := percentile(wa.lat, 0.99), percentile(wb.lat, 0.99)
	b.ReportMetric(ms(percentile(wa.lat, 0.5)), "A-p50-ms")
	b.ReportMetric(ms(pa), "A-p99-ms")
	b.ReportMetric(ms(percentile(wb.lat, 0.5)), "B-p50-ms")
	b.ReportMetric(ms(pb), "B-p99-ms")
	b.ReportMetric(ms(pb-pa), "added-p99-ms")
}

// BenchmarkFailover: replica A holds a session and dies (its connection
// drops); B retries the session until it holds it and has stored a step.
// The goal: within the lease TTL + 1 s.
func BenchmarkFailover(b *testing.B) {
	c := natstest.Three(b)
	const ttl = 2 * time.Second
	bb := openTTL(b, c.URL(), "B", ttl)
	var worst, total time.Duration
	for range b.N {
		ba := openTTL(b, c.URL(), "A", ttl)
		m := session.NewMeta(time.Now())
		if err := ba.Sessions().Create(m); err != nil {
			b.Fatal(err)
		}
		if _, err := ba.Leaser().Acquire(m.ID); err != nil {
			b.Fatal(err)
		}
		time.Sleep(ttl / 2) // renewed at least once
		died := time.Now()
		ba.Conn().Close()
		for {
			l, err := bb.Leaser().Acquire(m.ID)
			if err == nil {
				if err := session.Fenced(bb.Sessions(), m.ID, l).Append(m.ID, step); err != nil {
					b.Fatal(err)
				}
				l.Release()
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		took := time.Since(died)
		worst, total = max(worst, took), total+took
	}
	b.ReportMetric(total.Seconds()/float64(b.N), "s/failover")
	b.ReportMetric(worst.Seconds(), "worst-s")
	b.ReportMetric(ttl.Seconds(), "ttl-s")
}

func openB(b *testing.B, url, replica string, replicas int) *jetstream.Backend {
	b.Helper()
	be, err := jetstream.Open(context.Background(), jetstream.Options{URL: url, Replica: replica, Replicas: replicas})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { be.Close() })
	return be
}

func openTTL(b *testing.B, url, replica string, ttl time.Duration) *jetstream.Backend {
	b.Helper()
	be, err := jetstream.Open(context.Background(), jetstream.Options{URL: url, Replica: replica, Replicas: 3, LeaseTTL: ttl})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { be.Close() })
	return be
}
