package event

import "sync"

// Queue decouples a producer from a slow consumer with a buffer so that the
// turn never waits on a transport. Its limit bounds the droppable events
// (Kind.Droppable): when the buffer is full, text chunks are merged into the
// chunk queued last (nothing is lost), other droppable events are dropped
// and counted, and the consumer then sees a Dropped event before the next
// delivered one, so a loss is never silent. Events a transport needs to stay
// consistent (Committed, tool calls, TurnEnd...) are queued past the limit:
// they are bounded by the turn itself, whose history holds them anyway.
//
// Emit is safe for concurrent use; the queue's lock is the one serialiser
// of a turn's stream (see Sink).
type Queue struct {
	mu      sync.Mutex
	cond    *sync.Cond
	buf     []Event
	limit   int
	dropped int
	closed  bool
	done    chan struct{}
	// queued and delivered count appended and delivered events, so Flush
	// can wait for what was queued before it.
	queued, delivered uint64
	drained           *sync.Cond
}

// NewQueue starts delivering events to sink on a goroutine of its own (all
// that is queued at once to a BatchSink); Close flushes what is queued and
// waits for it.
func NewQueue(sink Sink, limit int) *Queue {
	if limit < 1 {
		limit = 1
	}
	q := &Queue{limit: limit, done: make(chan struct{})}
	q.cond = sync.NewCond(&q.mu)
	q.drained = sync.NewCond(&q.mu)
	go q.run(sink)
	return q
}

// Emit enqueues e without blocking.
func (q *Queue) Emit(e Event) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	if len(q.buf) >= q.limit {
		last := &q.buf[len(q.buf)-1]
		if mergeable(last, &e) {
			merged := *last.Content
			merged.Text += e.Content.Text
			last.Content = &merged
			return
		}
		if e.Kind.Droppable() {
			q.dropped++
			return
		}
	}
	if q.dropped > 0 {
		q.buf = append(q.buf, Event{SessionID: e.SessionID, Kind: Dropped, Count: q.dropped})
		q.dropped = 0
		q.queued++
	}
	q.buf = append(q.buf, e)
	q.queued++
	q.cond.Signal()
}

func (*Queue) concurrentSafe() {}

// Flush waits until every event queued before it was delivered: a terminal
// that asks the user something first shows what led to the question.
func (q *Queue) Flush() {
	q.mu.Lock()
	defer q.mu.Unlock()
	target := q.queued
	for q.delivered < target && !q.finished() {
		q.drained.Wait()
	}
}

func (q *Queue) finished() bool {
	select {
	case <-q.done:
		return true
	default:
		return false
	}
}

// Close delivers what is queued, then stops.
func (q *Queue) Close() {
	q.mu.Lock()
	q.closed = true
	q.cond.Signal()
	q.mu.Unlock()
	<-q.done
}

func (q *Queue) run(sink Sink) {
	defer func() {
		q.mu.Lock()
		close(q.done)
		q.drained.Broadcast()
		q.mu.Unlock()
	}()
	var spare []Event
	for {
		q.mu.Lock()
		for len(q.buf) == 0 && !q.closed {
			q.cond.Wait()
		}
		if len(q.buf) == 0 && q.closed {
			q.mu.Unlock()
			return
		}
		// Two buffers swap roles, so a steady stream allocates none.
		batch := q.buf
		q.buf = spare[:0]
		q.mu.Unlock()
		if bs, ok := sink.(BatchSink); ok {
			bs.EmitBatch(batch)
		} else {
			for _, e := range batch {
				sink.Emit(e)
			}
		}
		q.mu.Lock()
		q.delivered += uint64(len(batch))
		q.drained.Broadcast()
		q.mu.Unlock()
		clear(batch) // drop references to delivered content
		spare = batch
	}
}

func mergeable(last, e *Event) bool {
	return last.Kind == e.Kind && last.SessionID == e.SessionID &&
		(e.Kind == AgentMessageChunk || e.Kind == AgentThoughtChunk || e.Kind == UserMessageChunk) &&
		last.Content != nil && e.Content != nil &&
		last.Content.Type == "text" && e.Content.Type == "text"
}
