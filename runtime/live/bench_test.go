package live

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/openheim/openheim/runtime/event"
)

// counter is a watcher that only counts; the last one of a session says
// when it has seen the events the turn waits for.
type counter struct {
	n, want atomic.Int64
	reached chan struct{}
}

func (c *counter) Emit(ev event.Event) {
	if ev.Kind == event.AgentMessageChunk && c.n.Add(1) == c.want.Load() && c.reached != nil {
		c.reached <- struct{}{}
	}
}

// BenchmarkHubFanout measures what one event of a running turn costs on
// its way to N watchers: the turn's queue, the hub's fan-out and each
// watcher's Emit. The turn emits in batches that fit the queue and waits
// for the last watcher to see each batch, so nothing is merged or dropped.
func BenchmarkHubFanout(b *testing.B) {
	const batch = 256
	for _, subs := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("%dsubs", subs), func(b *testing.B) {
			h := NewHub(context.Background(), nil)
			defer h.Stop()
			watchers := make([]counter, subs)
			for i := range watchers {
				h.Subscribe("s", &watchers[i])
			}
			last := &watchers[subs-1]
			last.reached = make(chan struct{})
			ev := event.Text("s", event.AgentMessageChunk, "a typical token ")
			b.ReportAllocs()
			b.ResetTimer()
			done, err := h.Run("s", nil, func(_ context.Context, sink event.Sink) (event.End, error) {
				for sent := 0; sent < b.N; {
					k := min(batch, b.N-sent)
					last.want.Store(int64(sent + k))
					for range k {
						sink.Emit(ev)
					}
					sent += k
					<-last.reached
				}
				return event.End{}, nil
			})
			if err != nil {
				b.Fatal(err)
			}
			<-done
		})
	}
}
