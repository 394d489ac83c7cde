package sessionsapi

import "net/http"

// Seed 003's lifecycle: idle -> running (-> waiting -> running) -> idle,
// or failed when a turn ends in an error (a provider that still fails
// after its retries, a store that cannot write). A failed session takes
// no more events (409 session_failed): its history stays readable, and a
// fork of it starts idle with a clone of its agent. A turn that completes
// on the session after all (one started over /ws, which seed 003 does not
// govern) clears the state.

// failedError refuses an event to a failed session.
func failedError(why string) error {
	return &apiError{status: http.StatusConflict, code: codeSessionFailed,
		msg: "the session failed (" + why + ") and takes no more events; fork it to go on (POST /v1/sessions/{id}/fork)"}
}

// fail puts the session in the failed state after a turn's error: the
// queued input cannot run and is dropped (the stream says which), and the
// state is stored. mu is held.
func (t *tracker) fail(why string) {
	t.failed = why
	var dropped []string
	for _, q := range t.runner.queue {
		dropped = append(dropped, q.id)
		t.runner.settle(q.id)
	}
	t.runner.queue = nil
	if len(dropped) > 0 {
		t.emitSSE("response.error", map[string]any{"code": codeSessionFailed, "param": nil,
			"message": "the session failed: its queued input was dropped", "dropped_queued_item_ids": dropped})
	}
	t.api.storeFailed(t.id, why)
}

// recovered clears the failed state after a turn that completed. mu is
// held.
func (t *tracker) recovered() {
	if t.failed == "" {
		return
	}
	t.failed = ""
	t.api.storeFailed(t.id, "")
}

// failedWhy is why the session failed, "" if it has not.
func (t *tracker) failedWhy() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.failed
}

// storeFailed records session id's failed state (why; "" clears it). It
// runs under the tracker's lock, so the records follow the turns' order.
func (a *API) storeFailed(id, why string) {
	s, err := a.sessions.settings(id)
	if err == nil && s.Failed != why {
		s.Failed = why
		err = a.sessions.save(id, s)
	}
	if err != nil {
		a.log.Warn("sessions api: storing a session's failed state", "session", id, "err", err)
	}
}
