package sessionsapi

import (
	"errors"
	"fmt"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/live"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/subagent"
)

// turnState is what the stream tracks during one run on the session.
type turnState struct {
	running bool
	kind    int // runTurn, runRecord or runCompact
	// recordingRun is the runner's number of the items a runRecord run
	// stores (runnerState.recording).
	recordingRun int
	resp         string           // the open response, "" before its input is stored
	created      int64            // when it began
	outputIndex  map[string]int   // item id -> output_index
	open         map[string]*Item // items being streamed: reasoning, text, tool calls
	output       []Item           // finished output items
	usage        *event.ContextUsage
	interrupted  bool
}

func newTurn(now int64, kind int) turnState {
	return turnState{running: true, kind: kind, created: now, outputIndex: map[string]int{}, open: map[string]*Item{}}
}

// begin opens a run (the hub's TurnStart). A turn's response is queued
// until its input is stored (the run resolves its model, waits for MCP
// servers, takes the session's lease); a compaction says it is under way.
// Queued items stored as they are make no response.
func (t *tracker) begin(ev event.Event) {
	kind := runTurn
	if len(ev.Messages) == 0 || len(ev.Messages[0].Content) == 0 {
		if t.runner.starting {
			kind = t.runner.kind
		}
	}
	t.turn = newTurn(t.api.now(), kind)
	if kind == runRecord {
		t.turn.recordingRun = t.runner.recordingRun
	}
	t.emitStatus()
	// The input is stored next, at t.next: the response that opens there.
	next := t.items.ids.response(t.next)
	switch kind {
	case runTurn:
		resp := t.response("queued")
		resp["id"] = next
		t.emitSSE("response.queued", map[string]any{"response": resp})
	case runCompact:
		t.emitSSE("response.compaction.in_progress", map[string]any{"conversation_id": t.conv, "response_id": next})
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
	case t.turn.kind == runRecord && t.turn.running:
		for _, it := range items {
			// A queued item, stored: the client's input taken in.
			t.emitSSE("session.input.consumed", map[string]any{"data": map[string]any{
				"queued_item_id": t.runner.consumedID(it.ID), "type": it.Type, "position": p, "data": it, "item": it}})
		}
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
// added went out with its start), then done.
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

// open announces an item as it starts (output_item.added); false if it
// was already.
func (t *tracker) open(it *Item) bool {
	if t.turn.open == nil {
		t.turn.open = map[string]*Item{}
	}
	if _, ok := t.turn.open[it.ID]; ok {
		return false
	}
	t.turn.open[it.ID] = it
	t.emitSSE("response.output_item.added", map[string]any{"output_index": t.indexOf(it.ID), "item": it})
	return true
}

// delta streams text of item id, announcing the item with its first delta.
func (t *tracker) delta(id, typ, name string, ev event.Event) {
	if ev.Content == nil || ev.Content.Text == "" {
		return
	}
	if _, ok := t.turn.open[id]; !ok {
		it := &Item{ID: id, ResponseID: t.turn.resp, Model: t.items.model, Type: typ, Status: "in_progress", Content: []Part{}}
		if typ == "message" {
			it.Role = "assistant"
		}
		t.open(it)
	}
	t.offer(deltaFrame(name, `"content_index":0,`, id, t.indexOf(id), ev.Content.Text, "", t.api.opts.Engine.Redactor().Bytes))
}

// thought streams reasoning: response.reasoning.started as its item
// opens, then its text, or its summary when the provider shows only that.
func (t *tracker) thought(ev event.Event) {
	if ev.Content == nil || ev.Content.Text == "" {
		return
	}
	id := t.items.ids.reasoning(t.next)
	it := &Item{ID: id, ResponseID: t.turn.resp, Model: t.items.model, Type: "reasoning", Status: "in_progress", Content: []Part{}}
	if ev.Summary {
		it.Content, it.Summary = nil, []Part{}
	}
	if t.open(it) {
		t.emitSSE("response.reasoning.started", map[string]any{"item_id": id, "output_index": t.indexOf(id)})
	}
	redact := t.api.opts.Engine.Redactor().Bytes
	if ev.Summary {
		t.offer(deltaFrame("response.reasoning_summary_text.delta", "", id, t.indexOf(id), ev.Content.Text, `,"summary_index":0`, redact))
		return
	}
	t.offer(deltaFrame("response.reasoning_text.delta", `"content_index":0,`, id, t.indexOf(id), ev.Content.Text, "", redact))
}

// callStarted announces a tool call the model began: the function_call
// item under the id it is stored with (its place in the reply), its
// arguments still to come.
func (t *tracker) callStarted(ev event.Event) {
	if ev.Tool == nil {
		return
	}
	args := ""
	t.open(&Item{ID: t.items.ids.call(t.next, ev.Index), ResponseID: t.turn.resp, Model: t.items.model,
		Type: "function_call", Status: "in_progress", Name: ev.Tool.Title, CallID: ev.Tool.ID, Arguments: &args})
}

// retrying says the model call is tried again (seed 003's
// response.retry). The failed attempt's tool calls are forgotten: the
// next attempt begins its own.
func (t *tracker) retrying(r *event.RetryInfo) {
	if r == nil {
		return
	}
	for id, it := range t.turn.open {
		if it.Type == "function_call" {
			delete(t.turn.open, id)
		}
	}
	t.emitSSE("response.retry", map[string]any{"response_id": t.turn.resp, "attempt": r.Attempt,
		"max_attempts": r.MaxRetries + 1, "delay_ms": r.Delay.Milliseconds(),
		"error": map[string]any{"code": "model_call_failed", "message": r.Err}})
}

// ended closes the run: the turn's response with how it ended, open items
// that were never stored as incomplete; the session goes back to idle (or
// to failed).
func (t *tracker) ended(end *event.End) {
	if end == nil {
		end = &event.End{}
	}
	for _, it := range t.turn.open {
		cut := *it
		cut.Status = "incomplete"
		t.emitSSE("response.output_item.done", map[string]any{"output_index": t.indexOf(cut.ID), "item": cut})
	}
	t.turn.open = nil
	if t.turn.kind == runRecord {
		if end.Err != nil {
			t.emitSSE("response.error", map[string]any{"code": codeServerError, "param": nil,
				"message": "storing the queued items failed: " + end.Err.Error()})
		}
	} else {
		t.endResponse(end)
	}
	if t.turn.kind != runRecord {
		t.reportUsage(t.turn.usage)
	}
	if t.turn.kind == runRecord && t.turn.recordingRun == t.runner.recordingRun {
		t.runner.recording = nil // stored, or not at all
	}
	t.turn = turnState{}
	t.runner.dropped = nil
	t.runner.settleAll()
	t.emitStatus()
	// The hub unregistered the turn before this event: queued input runs
	// next (not on the hub's delivering goroutine, which a turn's start
	// would wait for).
	go func() {
		t.kick()
		t.api.sessions.release(t.id, t)
	}()
}

// reportUsage tells the streams what the session used after a run
// (seed 003's session.usage): how full its context is and, when its models
// are priced, what it cost so far. The run stored the session's meta
// before its end was published. mu is held.
func (t *tracker) reportUsage(u *event.ContextUsage) {
	meta, err := t.api.opts.Store.LoadMeta(t.id)
	if err != nil || (u == nil && len(meta.UsageByModel) == 0) {
		return
	}
	ev := map[string]any{"conversation_id": t.conv}
	if u != nil {
		ev["context_tokens"] = u.Used
		if u.Size > 0 {
			ev["context_window"] = u.Size
		}
	}
	if cost := t.api.cost(meta, ""); cost != nil && len(meta.UsageByModel) > 0 {
		ev["total_cost_usd"] = *cost
	}
	t.emitSSE("session.usage", ev)
}

// childStarted tells that the turn started a subagent, as a session of
// its own (seed 003's session.created on the parent's stream). Profile
// subagents are the agents ag_profile_<name>; an inline one has none.
func (t *tracker) childStarted(c *event.ChildSession) {
	if c == nil {
		return
	}
	var agentID any
	if c.Agent != subagent.InlineName {
		agentID = profileAgentPrefix + c.Agent
	}
	t.emitSSE("session.created", map[string]any{"conversation_id": t.conv, "child_conversation_id": convID(c.SessionID),
		"agent_id": agentID, "agent_name": c.Agent, "call_id": c.CallID, "response_id": t.turn.resp})
}

// endResponse tells how the turn's response ended.
func (t *tracker) endResponse(end *event.End) {
	if t.turn.resp == "" {
		t.turn.resp = t.items.ids.response(t.next) // the turn died before storing its input
	}
	switch {
	case end.StopReason == event.StopCancelled && t.turn.interrupted:
		t.finish("response.incomplete", "incomplete", end, map[string]any{"reason": "user_interrupt"}, nil)
		t.emitSSE("session.interrupted", map[string]any{"data": map[string]any{
			"requested_at": t.runner.interruptedAt, "queued_item_id": nil, "dropped_queued_item_ids": t.runner.dropped}})
	case end.StopReason == event.StopCancelled:
		// Cancelled by something else than this API's interrupt: the
		// session deleted, its agent deleted, the server stopping, a
		// client on /ws.
		t.finish("response.cancelled", "cancelled", end, nil, nil)
	case errors.As(end.Err, new(*live.ReplicaLostError)):
		// As after a crash here: the response failed, the session did not
		// (the next turn may run on any replica).
		t.finish("response.failed", "failed", end, nil, map[string]any{"code": "server_error", "message": end.Err.Error()})
	case end.Err != nil:
		t.finish("response.failed", "failed", end, nil, map[string]any{"code": "server_error", "message": end.Err.Error()})
		t.fail(end.Err.Error())
	case end.StopReason == event.StopMaxTokens:
		t.finish("response.incomplete", "incomplete", end, map[string]any{"reason": "max_output_tokens"}, nil)
	case end.StopReason == event.StopMaxTurnRequests:
		t.finish("response.incomplete", "incomplete", end, map[string]any{"reason": "max_turn_requests"}, nil)
	default:
		t.finish("response.completed", "completed", end, nil, nil)
		t.recovered()
	}
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
