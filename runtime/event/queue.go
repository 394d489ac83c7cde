package event

import (
	"strings"
	"sync"
)

// Queue decouples a producer from a slow consumer with a buffer so that the
// turn never waits on a transport. Its limit bounds the droppable events
// (Kind.Droppable): when the buffer is full, text chunks are merged into the
// chunk queued last (nothing is lost), other droppable events are dropped
// and counted, and the consumer then sees a Dropped event before the next
// delivered one, so a loss is never silent. Events a transport needs to stay
// consistent (Committed, tool calls, TurnEnd...) are queued past the limit:
// they are bounded by the turn itself, whose history holds them anyway.
//
// A queue may also merge earlier (MergeFrom): a consumer that is behind
// would merge the run anyway (Coalesce), and merging as the chunks arrive
// keeps a backlog of a whole reply from being held one event (and one
// block) per token.
//
// Emit is safe for concurrent use; the queue's lock is the one serialiser
// of a turn's stream (see Sink).
type Queue struct {
	mu   sync.Mutex
	sink Sink
	// running says a delivering goroutine is on its way: it runs while
	// events wait and ends when the queue is empty, so an idle turn (a
	// slow model, a tool running, the session being saved) holds no
	// goroutine and no stack for its queue.
	running bool
	ended   bool // done is closed
	buf     []Event
	spare   []Event // the delivered batch, reused: two buffers swap roles
	limit   int
	mergeAt int // from this many queued events, text chunks merge (0: at limit)
	dropped int
	closed  bool
	done    chan struct{}
	// tail is the text of the last queued event while chunks merge into
	// it: appended to in place (amortised linear, where concatenating
	// strings copied the run once per chunk), made its Content once it is
	// delivered or followed by another event.
	tail    strings.Builder
	merging bool
	// queued and delivered count appended and delivered events, so Flush
	// can wait for what was queued before it.
	queued, delivered uint64
	drained           *sync.Cond
}

// NewQueue delivers events to sink, in order, on a goroutine that runs
// while some wait (all that is queued at once to a BatchSink); Close
// flushes what is queued and waits for it.
func NewQueue(sink Sink, limit int) *Queue {
	if limit < 1 {
		limit = 1
	}
	q := &Queue{sink: sink, limit: limit, done: make(chan struct{})}
	q.drained = sync.NewCond(&q.mu)
	return q
}

// MergeFrom makes text chunks merge into the chunk queued last once n
// events are queued (the consumer is behind), up to MaxCoalesced bytes per
// merged chunk; at the limit they merge whatever their size. Call it
// before the first Emit.
func (q *Queue) MergeFrom(n int) {
	q.mu.Lock()
	q.mergeAt = n
	q.mu.Unlock()
}

// Emit enqueues e without blocking.
func (q *Queue) Emit(e Event) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.emitLocked(e)
	q.startLocked()
}

// EmitBatch enqueues evs, in order, as Emit would each, in one step: the
// delivery that follows takes them together (a relay hands over what
// another process delivered at once).
func (q *Queue) EmitBatch(evs []Event) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i := range evs {
		q.emitLocked(evs[i])
	}
	q.startLocked()
}

// startLocked starts the delivering goroutine if events wait for it.
func (q *Queue) startLocked() {
	if !q.running && len(q.buf) > 0 {
		q.running = true
		go q.run()
	}
}

func (q *Queue) emitLocked(e Event) {
	if q.closed {
		return
	}
	full := len(q.buf) >= q.limit
	if full || (q.mergeAt > 0 && len(q.buf) >= q.mergeAt) {
		if q.mergeLocked(&e, full) {
			return
		}
		if full && e.Kind.Droppable() {
			q.dropped++
			return
		}
	}
	q.sealLocked()
	if q.dropped > 0 {
		q.buf = append(q.buf, Event{SessionID: e.SessionID, Kind: Dropped, Count: q.dropped})
		q.dropped = 0
		q.queued++
	}
	q.buf = append(q.buf, e)
	q.queued++
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

func (q *Queue) finished() bool { return q.ended }

// Close delivers what is queued, then stops.
func (q *Queue) Close() {
	q.mu.Lock()
	q.closed = true
	if !q.running {
		q.endLocked()
	}
	q.mu.Unlock()
	<-q.done
}

func (q *Queue) endLocked() {
	if !q.ended {
		q.ended = true
		close(q.done)
		q.drained.Broadcast()
	}
}

// run delivers until the queue is empty.
func (q *Queue) run() {
	for {
		q.mu.Lock()
		if len(q.buf) == 0 {
			q.running = false
			if q.closed {
				q.endLocked()
			}
			q.mu.Unlock()
			return
		}
		// Two buffers swap roles, so a steady stream allocates none.
		q.sealLocked()
		batch := q.buf
		q.buf, q.spare = q.spare[:0], nil
		q.mu.Unlock()
		if bs, ok := q.sink.(BatchSink); ok {
			bs.EmitBatch(batch)
		} else {
			for _, e := range batch {
				q.sink.Emit(e)
			}
		}
		clear(batch) // drop references to delivered content
		q.mu.Lock()
		q.delivered += uint64(len(batch))
		q.drained.Broadcast()
		q.spare = batch
		q.mu.Unlock()
	}
}

// mergeLocked appends e's text to the chunk queued last, if e continues
// it; below the limit only up to MaxCoalesced bytes.
func (q *Queue) mergeLocked(e *Event, full bool) bool {
	last := &q.buf[len(q.buf)-1]
	if !mergeable(last, e) || last.Summary != e.Summary {
		return false
	}
	size := len(last.Content.Text)
	if q.merging {
		size = q.tail.Len()
	}
	if !full && size+len(e.Content.Text) > MaxCoalesced {
		return false
	}
	if !q.merging {
		q.tail.Grow(2 * (size + len(e.Content.Text)))
		q.tail.WriteString(last.Content.Text)
		q.merging = true
	}
	q.tail.WriteString(e.Content.Text)
	return true
}

// sealLocked makes the merged text the last queued event's Content (a new
// block: the emitter's own is left as it was).
func (q *Queue) sealLocked() {
	if !q.merging {
		return
	}
	last := &q.buf[len(q.buf)-1]
	c := *last.Content
	c.Text = q.tail.String() // the builder's bytes, not a copy
	last.Content = &c
	q.merging = false
	q.tail = strings.Builder{}
}

func mergeable(last, e *Event) bool {
	return last.Kind == e.Kind && last.SessionID == e.SessionID &&
		(e.Kind == AgentMessageChunk || e.Kind == AgentThoughtChunk || e.Kind == UserMessageChunk) &&
		last.Content != nil && e.Content != nil &&
		last.Content.Type == "text" && e.Content.Type == "text"
}
