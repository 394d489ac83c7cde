// Package retry is the one retry loop of openheim's model and embedding
// calls: llm.Retryable errors are retried with jittered exponential backoff,
// a server's Retry-After is honoured up to a limit, and nothing is retried
// once the caller's context is done.
package retry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/openheim/openheim/runtime/llm"
)

// DefaultMaxWait is the longest wait before a retry when Policy.MaxWait is
// zero: a server asking for longer (Retry-After) fails the call.
const DefaultMaxWait = 60 * time.Second

// Policy says how Do and Wrap retry. Zero fields take the defaults.
type Policy struct {
	MaxRetries int           // retries after the first attempt; default 3, negative: none
	BaseDelay  time.Duration // first backoff; default 500ms, doubled per retry
	MaxDelay   time.Duration // cap on one backoff wait; default 8s
	// MaxWait is the longest wait before one retry: backoff is capped at
	// it too, and a server whose Retry-After asks for longer makes the
	// call fail at once with an error saying so, rather than be hammered
	// sooner than it asked. Default DefaultMaxWait.
	MaxWait time.Duration
	// Logger receives one Warn record per retry (Debug when the call's
	// context has an observer: WithObserver); nil means slog.Default().
	Logger *slog.Logger
	// Sleep waits d, or returns ctx's error when ctx ends first; nil means
	// a timer. Tests replace it to check waits without taking them.
	Sleep func(ctx context.Context, d time.Duration) error
}

func (pol Policy) withDefaults() Policy {
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
func (pol Policy) delay(n int, err error) (d time.Duration, asked bool) {
	var se *llm.StatusError
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
// one warning how long and why, and telling notify (when set) before it
// waits. It fails, without waiting, when the server asks for more than
// MaxWait, and when ctx ends first.
func (pol Policy) wait(ctx context.Context, n int, what string, err error, notify func(Attempt)) error {
	d, asked := pol.delay(n, err)
	why := "(backoff)"
	if asked {
		if d > pol.MaxWait {
			return fmt.Errorf("%w; the server asks to retry in %v (Retry-After), longer than the %v openheim waits at most (max_retry_wait_secs): not retrying",
				err, d, pol.MaxWait)
		}
		why = "as the server asked (Retry-After)"
	}
	msg, attrs := fmt.Sprintf("llm: retrying %s in %v %s", what, d.Round(time.Millisecond), why),
		[]any{"attempt", n + 1, "max_retries", pol.MaxRetries, "error", err.Error()}
	a := Attempt{What: what, N: n + 1, Max: pol.MaxRetries, Wait: d, Asked: asked, Err: err}
	// A retry the stream tells its consumer of (notify) reaches a front end
	// as an event; the observer hears of the others.
	if obs := observer(ctx); obs != nil {
		if notify == nil {
			obs(a)
		}
		pol.Logger.Debug(msg, attrs...)
	} else {
		pol.Logger.Warn(msg, attrs...)
	}
	if notify != nil {
		notify(a)
	}
	if serr := pol.Sleep(ctx, d); serr != nil {
		return fmt.Errorf("llm: %w while waiting to retry after: %v", serr, err)
	}
	return nil
}

// Do calls fn until it succeeds, fails for good (llm.Retryable says no),
// the policy's retries are spent or ctx ends, waiting between attempts as
// the policy says. what names the call in the retry warnings.
func Do(ctx context.Context, pol Policy, what string, fn func() error) error {
	_, err := run(ctx, pol.withDefaults(), what, func() (struct{}, bool, error) {
		return struct{}{}, true, fn()
	}, nil)
	return err
}

// run is the loop behind Do and Wrap. try makes one attempt; again false
// makes its failure final whatever the error. onRetry, when set, hears of
// each retry before its wait. pol has its defaults.
func run[T any](ctx context.Context, pol Policy, what string, try func() (T, bool, error),
	onRetry func(Attempt)) (T, error) {
	for attempt := 0; ; attempt++ {
		v, again, err := try()
		if err == nil || !again || attempt >= pol.MaxRetries || !llm.Retryable(err) || ctx.Err() != nil {
			return v, err
		}
		if err := pol.wait(ctx, attempt, what, err, onRetry); err != nil {
			var zero T
			return zero, err
		}
	}
}

type provider struct {
	p   llm.Provider
	pol Policy
}

// Wrap returns p with llm.Retryable errors retried with backoff. An attempt
// that has already forwarded text or thinking is never retried: the
// consumer has shown those fragments to the user, and a second attempt
// would stream a different answer after them. Before each wait the consumer gets an
// llm.DeltaRetry saying when and why.
func Wrap(p llm.Provider, pol Policy) llm.Provider {
	return &provider{p: p, pol: pol.withDefaults()}
}

// Stream implements llm.Provider.
func (r *provider) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
	var told func(Attempt)
	if onDelta != nil {
		told = func(a Attempt) {
			// The retry goes ahead whatever the consumer answers.
			_ = onDelta(llm.Delta{Kind: llm.DeltaRetry, Retry: &llm.RetryNotice{Attempt: a.N,
				MaxRetries: a.Max, Delay: a.Wait, Err: a.Err.Error(), Asked: a.Asked}})
		}
	}
	return run(ctx, r.pol, "model call", func() (*llm.Response, bool, error) {
		forwarded := false
		resp, err := r.p.Stream(ctx, req, func(d llm.Delta) error {
			// Text and thinking were shown; the start of a tool call was
			// not (a retry may begin it again, or another).
			forwarded = forwarded || d.Kind == llm.DeltaText || d.Kind == llm.DeltaThinking
			if onDelta == nil {
				return nil
			}
			return onDelta(d)
		})
		return resp, !forwarded, err
	}, told)
}
