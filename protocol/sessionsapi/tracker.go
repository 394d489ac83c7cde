package sessionsapi

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/message"
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
}

// turnState is what the stream tracks during one turn.
type turnState struct {
	running     bool
	resp        string           // the open response, "" before its input is stored
	created     int64            // when it began
	outputIndex map[string]int   // item id -> output_index
	open        map[string]*Item // items being streamed: reasoning and text
	output      []Item           // finished output items
	usage       *event.ContextUsage
	interrupted bool
}

func newTracker(api *API, id string) (*tracker, error) {
	t := &tracker{api: api, id: id, conv: convID(id), subs: map[*streamSub]struct{}{}}
	t.items = newItemConverter(id, api.agentName(id))
	t.waiting.init()
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
		t.turn = turnState{running: true, resp: t.items.resp, created: api.now(), outputIndex: map[string]int{}, open: map[string]*Item{}}
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
		t.turn = turnState{running: true, created: t.api.now(), outputIndex: map[string]int{}, open: map[string]*Item{}}
		t.emitStatus()
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
		t.delta(t.items.ids.reasoning(t.next), "reasoning", "response.reasoning_text.delta", ev)
	case event.AgentMessageChunk:
		t.delta(t.items.ids.message(t.next), "message", "response.output_text.delta", ev)
	case event.UsageUpdate:
		t.turn.usage = ev.Usage
	case event.Dropped:
		t.dropped(ev.Count)
	case event.TurnEnd:
		t.ended(ev.End)
	}
}

// committed turns a stored message into stream events.
func (t *tracker) committed(p int, m message.Message) {
	opening := opens(m, t.items.prevRole)
	items := t.items.add(p, m)
	if opening {
		t.turn.resp = t.items.ids.response(p)
	}
	switch {
	case m.Role == message.RoleUser && m.Compaction:
		for _, it := range items {
			t.emitItem(it, true)
		}
	case m.Role == message.RoleUser:
		if len(items) == 0 || m.Content == nil {
			return
		}
		if !opening && m.Content[0].Type == message.TypeImage {
			return // images of tool results: in the snapshot, not news
		}
		t.emitSSE("session.input.consumed", map[string]any{"data": map[string]any{
			"queued_item_id": t.runner.consumedID(items[0].ID), "type": "message", "position": p,
			"data": map[string]any{"role": "user", "content": items[0].Content}, "item": items[0]}})
		if opening && t.turn.running {
			resp := t.response("in_progress")
			t.emitSSE("response.created", map[string]any{"response": resp})
			t.emitSSE("response.in_progress", map[string]any{"response": resp})
		}
	default:
		for _, it := range items {
			t.emitItem(it, false)
		}
	}
}

// emitItem announces a finished item: added (unless it streamed, when
// added went out with its first delta), then done.
func (t *tracker) emitItem(it Item, always bool) {
	if _, streamed := t.turn.open[it.ID]; !streamed || always {
		t.emitSSE("response.output_item.added", map[string]any{"output_index": t.indexOf(it.ID), "item": it})
	}
	delete(t.turn.open, it.ID)
	t.turn.output = append(t.turn.output, it)
	t.emitSSE("response.output_item.done", map[string]any{"output_index": t.indexOf(it.ID), "item": it})
}

func (t *tracker) indexOf(id string) int {
	if i, ok := t.turn.outputIndex[id]; ok {
		return i
	}
	if t.turn.outputIndex == nil {
		t.turn.outputIndex = map[string]int{}
	}
	i := len(t.turn.outputIndex)
	t.turn.outputIndex[id] = i
	return i
}

// delta streams text of item id, announcing the item with its first delta.
func (t *tracker) delta(id, typ, name string, ev event.Event) {
	if ev.Content == nil || ev.Content.Text == "" {
		return
	}
	if t.turn.open == nil {
		t.turn.open = map[string]*Item{}
	}
	if _, ok := t.turn.open[id]; !ok {
		it := &Item{ID: id, ResponseID: t.turn.resp, Model: t.items.model, Type: typ, Status: "in_progress", Content: []Part{}}
		if typ == "message" {
			it.Role = "assistant"
		}
		t.turn.open[id] = it
		t.emitSSE("response.output_item.added", map[string]any{"output_index": t.indexOf(id), "item": it})
	}
	t.emitSSE(name, map[string]any{"item_id": id, "output_index": t.indexOf(id), "content_index": 0, "delta": ev.Content.Text})
}

// ended closes the turn's response and returns the session to idle.
func (t *tracker) ended(end *event.End) {
	if end == nil {
		end = &event.End{}
	}
	if t.turn.resp == "" {
		t.turn.resp = t.items.ids.response(t.next) // the turn died before storing its input
	}
	switch {
	case end.StopReason == event.StopCancelled:
		reason := "cancelled"
		if t.turn.interrupted {
			reason = "user_interrupt"
		}
		t.finish("response.incomplete", "incomplete", end, map[string]any{"reason": reason}, nil)
		if t.turn.interrupted {
			t.emitSSE("session.interrupted", map[string]any{"data": map[string]any{
				"requested_at": t.runner.interruptedAt, "queued_item_id": nil, "dropped_queued_item_ids": t.runner.dropped}})
		}
	case end.Err != nil:
		t.finish("response.failed", "failed", end, nil, map[string]any{"code": "server_error", "message": end.Err.Error()})
	case end.StopReason == event.StopMaxTokens:
		t.finish("response.incomplete", "incomplete", end, map[string]any{"reason": "max_output_tokens"}, nil)
	case end.StopReason == event.StopMaxTurnRequests:
		t.finish("response.incomplete", "incomplete", end, map[string]any{"reason": "max_turn_requests"}, nil)
	default:
		t.finish("response.completed", "completed", end, nil, nil)
	}
	t.turn = turnState{}
	t.runner.dropped = nil
	t.emitStatus()
	// The hub unregistered the turn before this event: queued input runs
	// next (not on the hub's delivering goroutine, which a turn's start
	// would wait for).
	go func() {
		t.kick()
		t.api.sessions.release(t.id, t)
	}()
}

// dropped tells the streams that the hub dropped n live events of the
// turn for a watcher that fell behind (only droppable ones: deltas and
// usage; stored items still arrive whole): seed 003's response.error,
// with code events_dropped, as the response goes on.
func (t *tracker) dropped(n int) {
	t.emitSSE("response.error", map[string]any{"code": "events_dropped", "param": nil, "count": n,
		"message": fmt.Sprintf("%d live events were dropped because a watcher of the session fell behind; "+
			"stored items still arrive whole (response.output_item.done, the snapshot)", n)})
}

// idleLocked reports whether nothing needs the tracker: no stream, no
// turn, no queued input, no question pending. mu is held.
func (t *tracker) idleLocked() bool {
	return len(t.subs) == 0 && !t.turn.running && len(t.runner.queue) == 0 && !t.runner.starting &&
		t.waiting.count() == 0 && !t.api.opts.Hub.IsRunning(t.id)
}

func (t *tracker) finish(name, status string, end *event.End, incomplete, errObj map[string]any) {
	resp := t.response(status)
	u := end.Usage
	resp["usage"] = map[string]any{"input_tokens": u.InputTokens + u.CacheReadTokens + u.CacheCreationTokens,
		"output_tokens": u.OutputTokens, "total_tokens": u.Total(),
		"input_tokens_details": map[string]any{"cached_tokens": u.CacheReadTokens}}
	if incomplete != nil {
		resp["incomplete_details"] = incomplete
	}
	if errObj != nil {
		resp["error"] = errObj
	}
	t.emitSSE(name, map[string]any{"response": resp})
}

// response is the Responses-style object of the open response.
func (t *tracker) response(status string) map[string]any {
	output := t.turn.output
	if output == nil {
		output = []Item{}
	}
	return map[string]any{"id": t.turn.resp, "object": "response", "created_at": t.turn.created, "status": status,
		"model": t.items.model, "conversation": map[string]any{"id": t.conv}, "output": output}
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
	for s := range t.subs {
		s.done()
	}
	t.subs = nil
	t.mu.Unlock()
	t.api.opts.Hub.Unsubscribe(t.id, t)
}
