package sessionsapi

import "testing"

// TestStreamSubBounded: a subscriber that falls a queue behind is cut
// (its handler ends the stream; the client reconnects and reconciles),
// and a closed session ends a stream with [DONE] after what was queued.
func TestStreamSubBounded(t *testing.T) {
	s := newStreamSub(2)
	if !s.offer([]byte("a")) || !s.offer([]byte("b")) {
		t.Fatal("the queue refused frames it has room for")
	}
	if s.offer([]byte("c")) {
		t.Fatal("a full queue took another frame")
	}
	if ended, over := s.state(); ended || !over {
		t.Errorf("state after overflow: ended %v over %v", ended, over)
	}
	select {
	case <-s.signal:
	default:
		t.Error("overflow did not signal the handler")
	}
	if s.offer([]byte("d")) {
		t.Error("a cut subscriber took a frame")
	}
	d := newStreamSub(2)
	d.offer([]byte("x"))
	d.done()
	d.done() // twice is fine
	if ended, over := d.state(); !ended || over || len(d.frames) != 1 {
		t.Errorf("done: ended %v over %v, %d frames kept", ended, over, len(d.frames))
	}
}
