package sessionsapi

import (
	"errors"
	"net/http"

	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/session"
)

// compact summarises the session's history into a compaction item, as a
// turn of its own: the stream shows it running, the compaction item, and
// the response's end.
func (a *API) compact(t *tracker) error {
	req, err := a.request(t)
	if err != nil {
		return err
	}
	hub := a.opts.Hub
	ctx, err := hub.Begin(t.id, nil)
	if err != nil {
		var busy *session.BusyError
		if errors.As(err, &busy) {
			return &apiError{http.StatusConflict, "a turn is running: wait for it or interrupt it, then compact"}
		}
		return err
	}
	queue := event.NewQueue(event.SinkFunc(func(ev event.Event) { hub.Publish(ev, nil) }), turnEvents)
	req.Sink = queue
	go func() {
		defer hub.Delivered()
		end, err := a.opts.Engine.Compact(ctx, req)
		queue.Close()
		if errors.Is(err, engine.ErrNothingToCompact) {
			end.Err, err = err, nil
		}
		hub.End(t.id, end, err)
	}()
	return nil
}
