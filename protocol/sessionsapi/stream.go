package sessionsapi

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// writeWindow bounds one write to a stream: a client that stops reading
// is dropped instead of holding the connection forever.
const writeWindow = 30 * time.Second

// maxCoalesce bounds the bytes written between two flushes of a stream.
const maxCoalesce = 64 << 10

// streamSub is one SSE subscriber: a bounded queue of encoded frames
// between the tracker (which must never wait) and the HTTP handler.
type streamSub struct {
	frames chan []byte
	mu     sync.Mutex
	ended  bool // the session closed: [DONE] follows the queued frames
	over   bool // the queue overflowed: the stream is cut
	signal chan struct{}
}

func newStreamSub(size int) *streamSub {
	return &streamSub{frames: make(chan []byte, size), signal: make(chan struct{})}
}

// offer queues a frame; false when the subscriber is too far behind (its
// stream is then cut, and the client reconciles with the snapshot).
func (s *streamSub) offer(frame []byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended || s.over {
		return false
	}
	select {
	case s.frames <- frame:
		return true
	default:
		s.over = true
		close(s.signal)
		return false
	}
}

// done says the session closed: the stream ends with [DONE].
func (s *streamSub) done() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ended && !s.over {
		s.ended = true
		close(s.signal)
	}
}

func (s *streamSub) state() (ended, over bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ended, s.over
}

// handleStream serves GET /v1/sessions/{session_id}/stream: the live tail
// of the session's events, a heartbeat every opts.Heartbeat, and
// data: [DONE] when the session closes.
func (a *API) handleStream(w http.ResponseWriter, r *http.Request) {
	id, err := a.sessionUUID(r.PathValue("session_id"))
	if err != nil {
		writeError(w, err)
		return
	}
	sub := newStreamSub(a.opts.StreamQueue)
	t, err := a.subscribe(id, sub)
	if err != nil {
		writeError(w, err)
		return
	}
	defer func() {
		t.unsubscribe(sub)
		a.sessions.release(id, t)
	}()

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // proxies that buffer would hold the live tail
	w.WriteHeader(http.StatusOK)
	out := &sseWriter{w: w, rc: http.NewResponseController(w), sub: sub}
	// The stream starts with where the session stands.
	if out.write(statusFrame(t)) {
		a.pump(r.Context(), out, sub)
	}
}

// subscribe adds sub to session id's tracker.
func (a *API) subscribe(id string, sub *streamSub) (*tracker, error) {
	var t *tracker
	err := a.sessions.withTracker(id, func(tr *tracker) error {
		if !tr.subscribe(sub) {
			tr.mu.Lock()
			retired := tr.retired
			tr.mu.Unlock()
			if retired {
				return errRetired
			}
			return notFound("session %q not found", convID(id))
		}
		t = tr
		return nil
	})
	return t, err
}

// pump writes sub's frames and heartbeats until the subscription ends
// (the frames left, then [DONE] when the session's stream ended), the
// client goes or a write fails.
func (a *API) pump(ctx context.Context, out *sseWriter, sub *streamSub) {
	beat := time.NewTicker(a.opts.Heartbeat)
	defer beat.Stop()
	for {
		select {
		case f := <-sub.frames:
			if !out.writeQueued(f) {
				return
			}
		case <-sub.signal:
			ended, _ := sub.state()
			for {
				select {
				case f := <-sub.frames:
					if !out.write(f) {
						return
					}
					continue
				default:
				}
				break
			}
			if ended {
				out.write([]byte("data: [DONE]\n\n"))
			}
			return
		case <-beat.C:
			if !out.write([]byte("event: response.heartbeat\ndata: {\"type\":\"response.heartbeat\"}\n\n")) {
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

// sseWriter writes a subscriber's frames, each write within writeWindow.
type sseWriter struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	sub *streamSub
}

func (o *sseWriter) write(p []byte) bool {
	o.rc.SetWriteDeadline(time.Now().Add(writeWindow))
	if _, err := o.w.Write(p); err != nil {
		return false
	}
	return o.rc.Flush() == nil
}

// writeQueued writes f and every frame queued behind it with one deadline
// and one flush: a subscriber that fell behind catches up in a few large
// writes rather than a system call per frame.
func (o *sseWriter) writeQueued(f []byte) bool {
	o.rc.SetWriteDeadline(time.Now().Add(writeWindow))
	for n := 0; ; n += len(f) {
		if _, err := o.w.Write(f); err != nil {
			return false
		}
		if n >= maxCoalesce {
			break
		}
		select {
		case f = <-o.sub.frames:
			continue
		default:
		}
		break
	}
	return o.rc.Flush() == nil
}

// statusFrame is a session.status event for the session as it is now.
func statusFrame(t *tracker) []byte {
	s := t.status()
	return []byte(`event: session.status` + "\n" + `data: {"type":"session.status","conversation_id":"` + t.conv +
		`","status":"` + s + `","data":{"status":"` + s + `"}}` + "\n\n")
}
