package event

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

type slowSink struct {
	mu      sync.Mutex
	started chan struct{}
	once    sync.Once
	gate    chan struct{}
	events  []Event
}

func (s *slowSink) Emit(e Event) {
	s.once.Do(func() { close(s.started) })
	<-s.gate
	s.mu.Lock()
	s.events = append(s.events, e)
	s.mu.Unlock()
}

func TestQueueMergesTextAndReportsDrops(t *testing.T) {
	sink := &slowSink{gate: make(chan struct{}), started: make(chan struct{})}
	q := NewQueue(sink, 2)
	// The consumer blocks on the first event; the rest pile up.
	q.Emit(Event{Kind: ToolCall, Tool: &ToolCallInfo{ID: "first"}})
	<-sink.started
	q.Emit(Text("s", AgentMessageChunk, "a"))
	q.Emit(Text("s", AgentMessageChunk, "b"))
	q.Emit(Text("s", AgentMessageChunk, "c"))                                   // full: merged into "b"
	q.Emit(Event{SessionID: "s", Kind: ToolCall, Tool: &ToolCallInfo{ID: "x"}}) // full: kept all the same
	q.Emit(Event{SessionID: "s", Kind: Plan})                                   // full: dropped
	q.Emit(Event{SessionID: "s", Kind: TurnEnd, End: &End{}})                   // never dropped
	close(sink.gate)
	q.Close()
	var kinds []string
	text := ""
	for _, e := range sink.events {
		kinds = append(kinds, string(e.Kind))
		if e.Kind == AgentMessageChunk {
			text += e.Content.Text
		}
		if e.Kind == Dropped && e.Count != 1 {
			t.Errorf("dropped count = %d", e.Count)
		}
	}
	if text != "abc" {
		t.Errorf("text = %q, nothing may be lost", text)
	}
	if got := strings.Join(kinds, ","); got != "tool_call,agent_message_chunk,agent_message_chunk,tool_call,dropped,turn_end" {
		t.Errorf("kinds = %s", got)
	}
}

func TestQueueDeliversInOrder(t *testing.T) {
	var got []string
	q := NewQueue(SinkFunc(func(e Event) { got = append(got, e.Content.Text) }), 16)
	for _, s := range []string{"1", "2", "3"} {
		q.Emit(Text("s", AgentThoughtChunk, s))
	}
	q.Close()
	q.Emit(Text("s", AgentThoughtChunk, "late")) // after Close: ignored
	if strings.Join(got, "") != "123" {
		t.Fatalf("got %v", got)
	}
}

func TestQueueFlushWaitsForQueuedEvents(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var got []string
	q := NewQueue(SinkFunc(func(e Event) {
		<-release
		mu.Lock()
		got = append(got, e.Content.Text)
		mu.Unlock()
	}), 16)
	defer q.Close()
	q.Emit(Text("s", AgentMessageChunk, "a"))
	q.Emit(Text("s", ToolCall, "b"))
	flushed := make(chan struct{})
	go func() { q.Flush(); close(flushed) }()
	select {
	case <-flushed:
		t.Fatal("Flush returned before the events were delivered")
	case <-time.After(20 * time.Millisecond):
	}
	close(release)
	<-flushed
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got, "") != "ab" {
		t.Errorf("delivered %q before Flush returned, want ab", got)
	}
}

func TestQueueFlushAfterCloseReturns(t *testing.T) {
	q := NewQueue(Discard, 4)
	q.Emit(Text("s", AgentMessageChunk, "a"))
	q.Close()
	q.Flush()
}

// TestQueueNeverDropsCommitted: a consumer stalled under a flood of chunks,
// usage updates, tool calls and committed messages loses only droppable
// events, says so, and gets every Committed and tool call, in order, and
// the turn's end last.
func TestQueueNeverDropsCommitted(t *testing.T) {
	sink := &slowSink{gate: make(chan struct{}), started: make(chan struct{})}
	q := NewQueue(sink, 8)
	q.Emit(Event{SessionID: "s", Kind: TurnStart})
	<-sink.started // the consumer holds this one until the flood is over
	const commits = 200
	for i := range commits {
		for j := range 20 {
			kind := AgentMessageChunk
			if j%2 == 1 {
				kind = AgentThoughtChunk // alternating kinds cannot merge
			}
			q.Emit(Text("s", kind, "x"))
			q.Emit(Event{SessionID: "s", Kind: UsageUpdate, Usage: &ContextUsage{Used: int64(j)}})
		}
		q.Emit(Event{SessionID: "s", Kind: ToolCall, Tool: &ToolCallInfo{ID: fmt.Sprint(i)}})
		q.Emit(Event{SessionID: "s", Kind: Committed, Index: i})
	}
	q.Emit(Event{SessionID: "s", Kind: TurnEnd, End: &End{}})
	close(sink.gate)
	q.Close()

	next, calls, dropped := 0, 0, 0
	for i, e := range sink.events {
		switch e.Kind {
		case Committed:
			if e.Index != next {
				t.Fatalf("committed #%d arrived as #%d", e.Index, next)
			}
			next++
		case ToolCall:
			if e.Tool.ID != fmt.Sprint(calls) {
				t.Fatalf("tool call %s arrived as #%d", e.Tool.ID, calls)
			}
			calls++
		case Dropped:
			dropped += e.Count
		case TurnEnd:
			if i != len(sink.events)-1 {
				t.Errorf("turn_end at %d of %d", i, len(sink.events))
			}
		}
	}
	if next != commits || calls != commits {
		t.Errorf("%d of %d committed and %d tool calls arrived", next, commits, calls)
	}
	if dropped == 0 {
		t.Error("nothing was dropped: the flood did not overflow the queue")
	}
}

func TestSyncWrapsOnce(t *testing.T) {
	q := NewQueue(Discard, 4)
	defer q.Close()
	if Sync(q) != Sink(q) {
		t.Error("a Queue is already safe: Sync must return it")
	}
	if Sync(nil) != Discard || Sync(Discard) != Discard {
		t.Error("Sync(nil) and Sync(Discard) must be Discard")
	}
	var got []Event // not safe by itself: Sync makes it so
	s := Sync(SinkFunc(func(e Event) { got = append(got, e) }))
	if Sync(s) != s {
		t.Error("Sync wrapped a synced sink again")
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				s.Emit(Event{Kind: ToolCallUpdate})
			}
		}()
	}
	wg.Wait()
	if len(got) != 800 {
		t.Errorf("%d of 800 events", len(got))
	}
}

func TestDroppableKinds(t *testing.T) {
	for _, k := range []Kind{Committed, TurnEnd, TurnStart, ToolCall, ToolCallUpdate, SessionInfoUpdate, Dropped} {
		if k.Droppable() {
			t.Errorf("%s must never be dropped", k)
		}
	}
	for _, k := range []Kind{AgentMessageChunk, AgentThoughtChunk, UserMessageChunk, UsageUpdate, Plan} {
		if !k.Droppable() {
			t.Errorf("%s may be dropped", k)
		}
	}
}

func TestQueueMergesFromThreshold(t *testing.T) {
	sink := &slowSink{gate: make(chan struct{}), started: make(chan struct{})}
	q := NewQueue(sink, 100)
	q.MergeFrom(2)
	q.Emit(Event{Kind: ToolCall, Tool: &ToolCallInfo{ID: "first"}})
	<-sink.started // the consumer holds the first; the rest wait
	q.Emit(Text("s", AgentMessageChunk, "a"))
	q.Emit(Text("s", AgentMessageChunk, "b")) // 1 queued: below the threshold
	own := Text("s", AgentMessageChunk, "c")
	q.Emit(own) // 2 queued: merged into "b"
	q.Emit(Text("s", AgentMessageChunk, "d"))
	thought := Text("s", AgentThoughtChunk, "t")
	thought.Summary = true
	q.Emit(thought)
	q.Emit(Text("s", AgentThoughtChunk, "u")) // not a summary: not merged into one
	big := strings.Repeat("x", MaxCoalesced)
	q.Emit(Text("s", AgentMessageChunk, big))
	q.Emit(Text("s", AgentMessageChunk, "y")) // past MaxCoalesced: a chunk of its own
	close(sink.gate)
	q.Close()
	var got []string
	for _, e := range sink.events[1:] {
		text := e.Content.Text
		if len(text) > 8 {
			text = fmt.Sprintf("%d bytes", len(text))
		}
		got = append(got, fmt.Sprintf("%s:%s", e.Kind, text))
	}
	want := "agent_message_chunk:a agent_message_chunk:bcd agent_thought_chunk:t agent_thought_chunk:u agent_message_chunk:16384 bytes agent_message_chunk:y"
	if strings.Join(got, " ") != want {
		t.Errorf("delivered %s\nwant      %s", strings.Join(got, " "), want)
	}
	if own.Content.Text != "c" {
		t.Errorf("the emitter's own block was changed: %q", own.Content.Text)
	}
}

// A queue whose consumer is behind holds a reply in a few merged chunks,
// not one event per token.
func BenchmarkQueueBacklog(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		sink := &slowSink{gate: make(chan struct{}), started: make(chan struct{})}
		q := NewQueue(sink, 4096)
		q.MergeFrom(16)
		q.Emit(Event{Kind: ToolCall, Tool: &ToolCallInfo{ID: "first"}})
		<-sink.started
		for range 200 {
			q.Emit(Text("s", AgentMessageChunk, "token "))
		}
		close(sink.gate)
		q.Close()
	}
}

// An idle queue (a turn waiting on its model or saving) holds no
// goroutine: a thousand turns at once would each hold a stack for nothing.
func TestQueueIdleHoldsNoGoroutine(t *testing.T) {
	base := runtime.NumGoroutine()
	var queues []*Queue
	var mu sync.Mutex
	n := 0
	for range 50 {
		q := NewQueue(SinkFunc(func(Event) { mu.Lock(); n++; mu.Unlock() }), 8)
		q.Emit(Text("s", AgentMessageChunk, "a"))
		q.Flush()
		queues = append(queues, q)
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > base+5 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > base+5 {
		t.Errorf("%d goroutines with 50 idle queues, %d before", g, base)
	}
	for _, q := range queues {
		q.Emit(Text("s", AgentMessageChunk, "b")) // wakes again
		q.Close()
	}
	if n != 100 {
		t.Errorf("delivered %d events, want 100", n)
	}
}

// batchSink records the batches it is handed.
type batchSink struct {
	mu      sync.Mutex
	batches [][]Event
}

func (s *batchSink) Emit(e Event) { s.EmitBatch([]Event{e}) }

func (s *batchSink) EmitBatch(evs []Event) {
	s.mu.Lock()
	s.batches = append(s.batches, append([]Event(nil), evs...))
	s.mu.Unlock()
}

// TestQueueEmitBatch: events handed over together are delivered together,
// in order, bounded as one Emit each would be (drops reported).
func TestQueueEmitBatch(t *testing.T) {
	sink := &batchSink{}
	q := NewQueue(sink, 4)
	var in []Event
	for i := range 6 {
		in = append(in, Event{SessionID: "s", Kind: Plan, Count: i})
	}
	in = append(in, Event{SessionID: "s", Kind: TurnEnd, End: &End{}})
	q.EmitBatch(in)
	q.Close()
	if len(sink.batches) != 1 {
		t.Fatalf("%d deliveries, want 1", len(sink.batches))
	}
	var got []string
	for _, e := range sink.batches[0] {
		got = append(got, fmt.Sprintf("%s:%d", e.Kind, e.Count))
	}
	if s := strings.Join(got, ","); s != "plan:0,plan:1,plan:2,plan:3,dropped:2,turn_end:0" {
		t.Fatalf("delivered %s", s)
	}
}
