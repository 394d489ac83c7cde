package sessionsapi

import (
	"context"
	"errors"

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
	t.mu.Lock()
	if t.runner.starting {
		t.mu.Unlock()
		return conflict("a turn is starting: wait for it or interrupt it, then compact")
	}
	t.runner.starting, t.runner.kind = true, runCompact // the stream announces the compaction
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		t.runner.starting = false
		t.mu.Unlock()
	}()
	_, err = a.opts.Hub.Run(t.id, nil, func(ctx context.Context, sink event.Sink) (event.End, error) {
		req.Sink = sink
		end, err := a.opts.Engine.Compact(ctx, req)
		if errors.Is(err, engine.ErrNothingToCompact) {
			end.Err, err = err, nil
		}
		return end, err
	})
	var busy *session.BusyError
	if errors.As(err, &busy) {
		return conflict("a turn is running: wait for it or interrupt it, then compact")
	}
	return err
}
