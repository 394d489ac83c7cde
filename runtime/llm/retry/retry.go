package llm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"
)

// DefaultMaxWait is the longest wait before a retry when RetryPolicy.MaxWait
// is zero: a server asking for longer (Retry-After) fails the call.
const DefaultMaxWait = 60 * time.Second

// RetryPolicy says how WithRetry retries. Zero fields take the defaults.
type RetryPolicy struct {
	MaxRetries int           // retries after the first attempt; default 3, negative: none
	BaseDelay  time.Duration // first backoff; default 500ms, doubled per retry
	MaxDelay   time.Duration // cap on one backoff wait; default 8s
	// MaxWait is the longest wait before one retry: backoff is capped at
	// it too, and a server whose Retry-After asks for longer makes the
	// call fail at once with an error saying so, rather than be hammered
	// sooner than it asked. Default DefaultMaxWait.
	MaxWait time.Duration
	// Logger receives one Warn record per retry; nil means slog.Default().
	Logger *slog.Logger
	// Sleep waits d, or returns ctx's error when ctx ends first; nil means
	// a timer. Tests replace it to check waits without taking them.
	Sleep func(ctx context.Context, d time.Duration) error
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
	if pol.MaxWait <= 0 {
		pol.MaxWait = DefaultMaxWait
	}
	if pol.Logger == nil {
		pol.Logger = slog.Default()
	}
	if pol.Sleep == nil {
		pol.Sleep = sleep
	}
	return pol
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// delay is the wait before retry number n (0-based): the server's
// Retry-After when it gave one (asked is then true), else exponential
// backoff with "equal jitter" (half fixed, half random) so clients that
// failed together do not retry together.
func (pol RetryPolicy) delay(n int, err error) (d time.Duration, asked bool) {
	var se *StatusError
	if errors.As(err, &se) && se.RetryAfter > 0 {
		return se.RetryAfter, true
	}
	ceiling := min(pol.MaxDelay, pol.MaxWait)
	d = pol.BaseDelay
	for i := 0; i < n && d < ceiling; i++ {
		d *= 2
	}
	d = min(d, ceiling)
	half := d / 2
	return half + rand.N(half+1), false
}

// wait sleeps before retry number n (0-based) of what after err, saying in
// one warning how long and why. It fails, without waiting, when the server
// asks for more than MaxWait, and when ctx ends first.
func (pol RetryPolicy) wait(ctx context.Context, n int, what string, err error) error {
	d, asked := pol.delay(n, err)
	why := "(backoff)"
	if asked {
		if d > pol.MaxWait {
			return fmt.Errorf("%w; the server asks to retry in %v (Retry-After), longer than the %v openheim waits at most (max_retry_wait_secs): not retrying",
				err, d, pol.MaxWait)
		}
		why = "as the server asked (Retry-After)"
	}
	pol.Logger.Warn(fmt.Sprintf("llm: retrying %s in %v %s", what, d.Round(time.Millisecond), why),
		"attempt", n+1, "max_retries", pol.MaxRetries, "error", err.Error())
	if serr := pol.Sleep(ctx, d); serr != nil {
		return fmt.Errorf("llm: %w while waiting to retry after: %v", serr, err)
	}
	return nil
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
		if err := r.pol.wait(ctx, attempt, "model call", err); err != nil {
			return nil, err
		}
	}
}
