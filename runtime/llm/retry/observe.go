package retry

import (
	"context"
	"time"
)

// Attempt is a retry about to happen: after failure number N of What, the
// call waits Wait, then tries again (N of Max retries).
type Attempt struct {
	What   string // "model call", "embedding"
	N, Max int
	Wait   time.Duration
	Asked  bool  // Wait is the server's Retry-After
	Err    error // the failure being retried
}

type observerKey struct{}

// WithObserver returns ctx telling the retries of the calls made under it
// to fn instead of the log: a terminal front end shows them as one status
// line rather than log lines over its output. fn runs on the calling
// goroutine and must not block.
func WithObserver(ctx context.Context, fn func(Attempt)) context.Context {
	return context.WithValue(ctx, observerKey{}, fn)
}

func observer(ctx context.Context) func(Attempt) {
	fn, _ := ctx.Value(observerKey{}).(func(Attempt))
	return fn
}
