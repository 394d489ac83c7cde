package sessionsapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/message"
)

// sseSessions and sseBurst shape BenchmarkSSEStream: 1,000 sessions, one
// SSE subscriber each over real HTTP on loopback, and each op a burst of
// text deltas emitted to every session, read to the last by every
// subscriber.
const (
	sseSessions = 1000
	sseBurst    = 20
)

// BenchmarkSSEStream measures the sessions API's live stream under load:
// what a delta costs from the hub's Emit to the bytes a subscriber reads
// (ns/delta), against its floor, a bare net/http SSE handler writing and
// flushing the same frames, encoded the plain way, from a channel per
// subscriber. The subscribers' reading shares the CPUs with the server in
// both, so compare the two, not the bare figures.
func BenchmarkSSEStream(b *testing.B) {
	b.Run("openheim", func(b *testing.B) {
		f := newFixture(b, "")
		var emit []func(event.Event)
		var ids []string
		for range sseSessions {
			ids = append(ids, f.create(nil)["id"].(string)[5:])
		}
		readers := openReaders(b, f.srv.URL, ids)
		for _, id := range ids {
			tr, err := f.api.sessions.tracker(id)
			if err != nil {
				b.Fatal(err)
			}
			tr.Emit(event.Event{SessionID: id, Kind: event.TurnStart, Messages: []message.Message{{Role: message.RoleUser}}})
			emit = append(emit, tr.Emit)
		}
		runBursts(b, readers, func(i int, text string) { emit[i](event.Text(ids[i], event.AgentMessageChunk, text)) })
	})
	b.Run("floor", func(b *testing.B) {
		chans := make([]chan []byte, sseSessions)
		var ids []string
		for i := range chans {
			chans[i] = make(chan []byte, 4096)
			ids = append(ids, string(rune('a'+i%26))+strings.Repeat("x", i/26))
		}
		index := map[string]int{}
		for i, id := range ids {
			index[id] = i
		}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			id := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/v1/sessions/conv_"), "/stream")
			ch := chans[index[id]]
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			rc := http.NewResponseController(w)
			rc.Flush()
			for {
				select {
				case f := <-ch:
					rc.SetWriteDeadline(time.Now().Add(writeWindow))
					if _, err := w.Write(f); err != nil || rc.Flush() != nil {
						return
					}
				case <-r.Context().Done():
					return
				}
			}
		}))
		b.Cleanup(srv.Close) // after the readers' bodies are closed (LIFO)
		readers := openReaders(b, srv.URL, ids)
		runBursts(b, readers, func(i int, text string) {
			data, _ := json.Marshal(map[string]any{"item_id": "msg_x_1", "output_index": 0, "content_index": 0, "delta": text,
				"type": "response.output_text.delta"})
			chans[i] <- []byte("event: response.output_text.delta\ndata: " + string(data) + "\n\n")
		})
	})
}

// sseReader counts the deltas one subscriber has read; it calls got once
// it reaches want.
type sseReader struct {
	want atomic.Int64
	got  func()
}

func openReaders(b *testing.B, base string, ids []string) []*sseReader {
	b.Helper()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: sseSessions}}
	readers := make([]*sseReader, len(ids))
	for i, id := range ids {
		resp, err := client.Get(base + "/v1/sessions/conv_" + id + "/stream")
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("stream %d: %v %v", i, err, resp)
		}
		b.Cleanup(func() { resp.Body.Close() })
		r := &sseReader{}
		readers[i] = r
		go func() {
			br := bufio.NewReaderSize(resp.Body, 64<<10)
			var n int64
			for {
				line, err := br.ReadSlice('\n')
				if err != nil && err != bufio.ErrBufferFull {
					return
				}
				if bytes.HasPrefix(line, []byte("event: response.output_text.delta")) {
					if n++; n == r.want.Load() {
						r.got()
					}
				}
			}
		}()
	}
	return readers
}

// runBursts emits sseBurst deltas to every session per op and waits until
// every subscriber has read them.
func runBursts(b *testing.B, readers []*sseReader, emit func(i int, text string)) {
	var wg sync.WaitGroup
	for _, r := range readers {
		r.got = wg.Done
	}
	b.ReportAllocs()
	b.ResetTimer()
	for n := 1; n <= b.N; n++ {
		wg.Add(len(readers))
		for _, r := range readers {
			r.want.Store(int64(n * sseBurst))
		}
		for range sseBurst {
			for i := range readers {
				emit(i, "a typical token ")
			}
		}
		wg.Wait()
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*sseBurst*len(readers)), "ns/delta")
}
