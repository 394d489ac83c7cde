package sessionsapi

import (
	"encoding/json"
	"sync"

	"github.com/openheim/openheim/runtime/event"
)

// Session statuses (seed 003's lifecycle).
const (
	statusIdle    = "idle"
	statusRunning = "running"
	statusWaiting = "waiting"
	statusFailed  = "failed"
)

// tracker is the sessions API's view of one live session. It subscribes
// to the hub (so it sees turns started on /ws as well as its own), turns
// the one event stream into seed 003's stream events once, and fans the
// encoded frames out to every SSE subscriber. It also runs the session's
// queued input (runner.go) and its pending questions (waiting.go).
type tracker struct {
	api  *API
	id   string // the session uuid
	conv string // "conv_" + id

	mu      sync.Mutex
	subs    map[*streamSub]struct{}
	closed  bool
	retired bool // idle and dropped by the registry: callers take a fresh one

	// The stream's view of the history: where the next stored message
	// goes, and the converter that names items exactly as snapshots do.
	next  int
	items *itemConverter
	turn  turnState

	runner  runnerState
	waiting waitState
	failed  string // why the session failed (lifecycle.go); "" if it has not
}

func newTracker(api *API, id string) (*tracker, error) {
	t := &tracker{api: api, id: id, conv: convID(id), subs: map[*streamSub]struct{}{}}
	t.items = newItemConverter(id, api.agentName(id))
	t.waiting.init()
	if s, err := api.sessions.settings(id); err == nil {
		t.failed = s.Failed
	}
	// Subscribe first, then read the store: a message stored in between
	// shows up in both, and Committed's index settles which is newer.
	api.opts.Hub.Subscribe(id, t)
	conv, err := api.opts.Store.Load(id)
	if err != nil {
		api.opts.Hub.Unsubscribe(id, t)
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.next == 0 {
		for i, m := range conv.Messages {
			t.items.add(i, m)
		}
		t.next = len(conv.Messages)
	}
	if api.opts.Hub.IsRunning(id) && !t.turn.running {
		// Watching a turn already under way: it has an open response.
		t.turn = newTurn(api.now(), runTurn)
		t.turn.resp = t.items.resp
	}
	return t, nil
}

// status is the session's lifecycle state now.
func (t *tracker) status() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.statusLocked()
}

func (t *tracker) statusLocked() string {
	switch {
	case t.waiting.count() > 0:
		return statusWaiting
	case t.turn.running: // from the hub's events, which this tracker sees all of
		return statusRunning
	case t.failed != "":
		return statusFailed
	}
	return statusIdle
}

// Emit implements event.Sink for the hub: it runs on the hub's delivering
// goroutine, so it only converts and queues.
func (t *tracker) Emit(ev event.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	switch ev.Kind {
	case event.TurnStart:
		t.begin(ev)
	case event.Committed:
		for j, m := range ev.Messages {
			p := ev.Index + j
			if p < t.next {
				continue // read from the store when this tracker began
			}
			t.next = p + 1
			t.committed(p, m)
		}
	case event.AgentThoughtChunk:
		t.thought(ev)
	case event.AgentMessageChunk:
		t.delta(t.items.ids.message(t.next), "message", "response.output_text.delta", ev)
	case event.ToolCallStreaming:
		t.callStarted(ev)
	case event.Retry:
		t.retrying(ev.Retry)
	case event.SubagentStarted:
		t.childStarted(ev.Child)
	case event.UsageUpdate:
		t.turn.usage = ev.Usage
	case event.Dropped:
		t.dropped(ev.Count)
	case event.TurnEnd:
		t.ended(ev.End)
	}
}

// idleLocked reports whether nothing needs the tracker: no stream, no
// turn, no queued input, no question pending. mu is held.
func (t *tracker) idleLocked() bool {
	return len(t.subs) == 0 && !t.turn.running && len(t.runner.queue) == 0 && !t.runner.starting &&
		t.waiting.count() == 0 && !t.api.opts.Hub.IsRunning(t.id)
}

func (t *tracker) emitStatus() {
	s := t.statusLocked()
	t.emitSSE("session.status", map[string]any{"conversation_id": t.conv, "status": s, "data": map[string]any{"status": s}})
}

// emitSSE encodes one stream event and queues it for every subscriber.
func (t *tracker) emitSSE(name string, fields map[string]any) {
	fields["type"] = name
	data, err := json.Marshal(fields)
	if err != nil {
		t.api.log.Warn("sessions api: dropping an event that does not encode", "event", name, "err", err)
		return
	}
	data = t.api.opts.Engine.Redactor().Bytes(data) // response.failed quotes the provider's error
	frame := make([]byte, 0, len(data)+len(name)+16)
	frame = append(frame, "event: "...)
	frame = append(frame, name...)
	frame = append(frame, "\ndata: "...)
	frame = append(frame, data...)
	frame = append(frame, "\n\n"...)
	t.offer(frame)
}

// offer queues an encoded frame for every subscriber (the same bytes for
// all, which nobody modifies); mu is held.
func (t *tracker) offer(frame []byte) {
	for s := range t.subs {
		if !s.offer(frame) {
			delete(t.subs, s)
		}
	}
}

// subscribe adds a stream subscriber; false once the session is closed.
func (t *tracker) subscribe(s *streamSub) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed || t.retired {
		return false
	}
	t.subs[s] = struct{}{}
	return true
}

func (t *tracker) unsubscribe(s *streamSub) {
	t.mu.Lock()
	delete(t.subs, s)
	t.mu.Unlock()
}

// close ends every stream with [DONE] and stops watching the session.
func (t *tracker) close() {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	t.closed = true
	t.runner.settleAll()
	for s := range t.subs {
		s.done()
	}
	t.subs = nil
	t.mu.Unlock()
	t.api.opts.Hub.Unsubscribe(t.id, t)
}
