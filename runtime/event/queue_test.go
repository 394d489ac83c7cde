package event

import (
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
	q.Emit(Event{SessionID: "s", Kind: ToolCall, Tool: &ToolCallInfo{ID: "x"}}) // full: dropped
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
	if got := strings.Join(kinds, ","); got != "tool_call,agent_message_chunk,agent_message_chunk,dropped,turn_end" {
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
