package sessionsapi

import (
	"testing"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/message"
)

// BenchmarkStreamDelta measures what one streamed text chunk costs the
// sessions API: converting it to response.output_text.delta, encoding it
// once and queueing it for each of 1 or 100 SSE subscribers.
func BenchmarkStreamDelta(b *testing.B) {
	for _, subs := range []int{1, 100} {
		b.Run(map[int]string{1: "1sub", 100: "100subs"}[subs], func(b *testing.B) {
			f := newFixture(b, "")
			defer f.api.Close()
			id := f.create(nil)["id"].(string)[5:]
			tr, err := f.api.sessions.tracker(id)
			if err != nil {
				b.Fatal(err)
			}
			var ss []*streamSub
			for range subs {
				s := newStreamSub(1 << 20)
				tr.subscribe(s)
				ss = append(ss, s)
			}
			tr.Emit(event.Event{SessionID: id, Kind: event.TurnStart, Messages: []message.Message{{Role: message.RoleUser}}})
			ev := event.Text(id, event.AgentMessageChunk, "a typical token ")
			b.ReportAllocs()
			for b.Loop() {
				tr.Emit(ev)
				for _, s := range ss {
					<-s.frames
				}
			}
		})
	}
}
