package engine

import (
	"context"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/message"
)

// Record stores msgs at the end of session req.SessionID's history as they
// are, under the session's lease like a turn, and announces them
// (event.Committed) to req.Sink: items a client adds to a history without
// a model call (the sessions API's queued function_call, its output and
// reasoning items). A later turn sends them with the rest of the history
// (a tool call left without a result gets one, as after any cut turn).
func (e *Engine) Record(ctx context.Context, req Request, msgs []message.Message) (event.End, error) {
	meta, err := e.open(req.SessionID)
	if err != nil {
		return event.End{}, err
	}
	_, h, err := e.hold(ctx, meta, false)
	if err != nil {
		return event.End{}, err
	}
	defer h.release()
	if len(msgs) > 0 {
		if err := h.store.Append(h.meta.ID, msgs...); err != nil {
			return LeaseEnd(event.End{}, h.lease), err
		}
		if req.Sink != nil {
			req.Sink.Emit(event.Event{SessionID: h.meta.ID, Kind: event.Committed, Messages: msgs, Index: len(h.history)})
		}
	}
	if _, err := e.save(h); err != nil {
		return LeaseEnd(event.End{}, h.lease), err
	}
	return event.End{StopReason: event.StopEndTurn}, nil
}
