package llm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"
)

// RetryPolicy says how WithRetry retries. Zero fields take the defaults.
type RetryPolicy struct {
	MaxRetries int           // retries after the first attempt; default 3, negative: none
	BaseDelay  time.Duration // first backoff; default 500ms, doubled per retry
	MaxDelay   time.Duration // cap on one wait, Retry-After included; default 8s
	// Logger receives one Warn record per retry; nil means slog.Default().
	Logger *slog.Logger
}

func (pol RetryPolicy) withDefaults() RetryPolicy {
	if pol.MaxRetries == 0 {
		pol.MaxRetries = 3
	}
	if pol.MaxRetries < 0 {
		pol.MaxRetries = 0
	}
	if pol.BaseDelay <= 0 {
		pol.BaseDelay = 500 * time.Millisecond
	}
	if pol.MaxDelay <= 0 {
		pol.MaxDelay = 8 * time.Second
	}
	if pol.Logger == nil {
		pol.Logger = slog.Default()
	}
	return pol
}

// delay is the wait before retry number n (0-based): exponential with "equal
// jitter" (half fixed, half random) so clients that failed together do not
// retry together, or the server's Retry-After when it gave one.
func (pol RetryPolicy) delay(n int, err error) time.Duration {
	var se *StatusError
	if errors.As(err, &se) && se.RetryAfter > 0 {
		return min(se.RetryAfter, pol.MaxDelay)
	}
	d := pol.BaseDelay
	for i := 0; i < n && d < pol.MaxDelay; i++ {
		d *= 2
	}
	d = min(d, pol.MaxDelay)
	half := d / 2
	return half + rand.N(half+1)
}

type retryProvider struct {
	p   Provider
	pol RetryPolicy
}

// WithRetry wraps p so that Retryable errors are retried with backoff. An
// attempt that has already forwarded a delta is never retried: the consumer
// has shown those fragments to the user, and a second attempt would stream a
// different answer after them.
func WithRetry(p Provider, pol RetryPolicy) Provider {
	return &retryProvider{p: p, pol: pol.withDefaults()}
}

// Stream implements Provider.
func (r *retryProvider) Stream(ctx context.Context, req *Request, onDelta func(Delta) error) (*Response, error) {
	for attempt := 0; ; attempt++ {
		forwarded := false
		resp, err := r.p.Stream(ctx, req, func(d Delta) error {
			forwarded = true
			if onDelta == nil {
				return nil
			}
			return onDelta(d)
		})
		if err == nil || forwarded || attempt >= r.pol.MaxRetries || !Retryable(err) || ctx.Err() != nil {
			return resp, err
		}
		wait := r.pol.delay(attempt, err)
		r.pol.Logger.Warn("llm: retrying model call",
			"attempt", attempt+1, "max_retries", r.pol.MaxRetries, "delay", wait, "error", err.Error())
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("llm: %w while waiting to retry after: %v", ctx.Err(), err)
		case <-t.C:
		}
	}
}
