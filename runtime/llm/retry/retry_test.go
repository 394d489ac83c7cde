package retry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/message"
)

// fakeProvider fails with errs in turn (forwarding deltas first when asked),
// then succeeds.
type fakeProvider struct {
	mu       sync.Mutex
	errs     []error
	forwards []bool
	calls    int
}

func (f *fakeProvider) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
	f.mu.Lock()
	i := f.calls
	f.calls++
	f.mu.Unlock()
	if i < len(f.forwards) && f.forwards[i] {
		if err := onDelta(llm.Delta{Kind: llm.DeltaText, Text: "partial"}); err != nil {
			return nil, err
		}
	}
	if i < len(f.errs) && f.errs[i] != nil {
		return nil, f.errs[i]
	}
	return &llm.Response{Content: []message.Block{message.Text("ok")}, StopReason: event.StopEndTurn}, nil
}

// fastPolicy backs off for milliseconds and takes no Retry-After wait.
var fastPolicy = Policy{BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond,
	Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Sleep: noSleep}

func noSleep(ctx context.Context, _ time.Duration) error { return ctx.Err() }

func TestWithRetryFake(t *testing.T) {
	s429 := &llm.StatusError{Status: 429}
	s500 := &llm.StatusError{Status: 500}
	cut := fmt.Errorf("%w: x", llm.ErrStreamCut)
	tests := []struct {
		name      string
		errs      []error
		forwards  []bool
		pol       Policy
		wantCalls int
		wantErr   string // "" means success
	}{
		{"success", nil, nil, fastPolicy, 1, ""},
		{"429 then ok", []error{s429}, nil, fastPolicy, 2, ""},
		{"500 x4 gives up after 3 retries", []error{s500, s500, s500, s500}, nil, fastPolicy, 4, "HTTP 500"},
		{"cut then ok", []error{cut}, nil, fastPolicy, 2, ""},
		{"400 not retried", []error{&llm.StatusError{Status: 400}}, nil, fastPolicy, 1, "HTTP 400"},
		{"cut after forwarding not retried", []error{cut}, []bool{true}, fastPolicy, 1, "stream cut"},
		{"earlier attempts did not forward", []error{s500, s500}, []bool{false, false, true}, fastPolicy, 3, ""},
		{"plain error not retried", []error{errors.New("bad")}, nil, fastPolicy, 1, "bad"},
		{"negative MaxRetries disables", []error{s500}, nil, Policy{MaxRetries: -1, Logger: fastPolicy.Logger}, 1, "HTTP 500"},
		{"MaxRetries 1", []error{s500, s500}, nil, Policy{MaxRetries: 1, BaseDelay: time.Millisecond, Logger: fastPolicy.Logger}, 2, "HTTP 500"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeProvider{errs: tt.errs, forwards: tt.forwards}
			_, err := Wrap(f, tt.pol).Stream(context.Background(), &llm.Request{}, func(llm.Delta) error { return nil })
			if f.calls != tt.wantCalls {
				t.Errorf("calls = %d, want %d", f.calls, tt.wantCalls)
			}
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestWithRetryStopsOnCancel(t *testing.T) {
	f := &fakeProvider{errs: []error{&llm.StatusError{Status: 503}, &llm.StatusError{Status: 503}}}
	pol := Policy{BaseDelay: time.Hour, MaxDelay: time.Hour, Logger: fastPolicy.Logger}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err := Wrap(f, pol).Stream(ctx, &llm.Request{}, nil)
	if !errors.Is(err, context.Canceled) || time.Since(start) > 2*time.Second || f.calls != 1 {
		t.Fatalf("err = %v after %v, %d calls", err, time.Since(start), f.calls)
	}
	if !strings.Contains(err.Error(), "HTTP 503") {
		t.Errorf("the last error should be kept in the message: %v", err)
	}
}

// TestDo: the loop embeddings use makes the same decisions as Wrap's: a
// retryable error is retried until the retries are spent, a final one is
// not, and success ends it.
func TestDo(t *testing.T) {
	s503 := &llm.StatusError{Status: 503}
	tests := []struct {
		name      string
		errs      []error
		wantCalls int
		wantErr   error
	}{
		{"success", nil, 1, nil},
		{"503 twice then ok", []error{s503, s503}, 3, nil},
		{"503 x4 gives up after 3 retries", []error{s503, s503, s503, s503, s503}, 4, s503},
		{"400 not retried", []error{&llm.StatusError{Status: 400}}, 1, &llm.StatusError{Status: 400}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			err := Do(context.Background(), fastPolicy, "test call", func() error {
				calls++
				if calls <= len(tt.errs) {
					return tt.errs[calls-1]
				}
				return nil
			})
			if calls != tt.wantCalls || fmt.Sprint(err) != fmt.Sprint(tt.wantErr) {
				t.Errorf("%d calls, err %v; want %d, %v", calls, err, tt.wantCalls, tt.wantErr)
			}
		})
	}
}

func TestRetryDelay(t *testing.T) {
	pol := Policy{}.withDefaults()
	if pol.MaxRetries != 3 || pol.BaseDelay != 500*time.Millisecond || pol.MaxDelay != 8*time.Second || pol.MaxWait != time.Minute {
		t.Fatalf("defaults = %+v", pol)
	}
	tests := []struct {
		n        int
		err      error
		min, max time.Duration
	}{
		{0, errors.New("x"), 250 * time.Millisecond, 500 * time.Millisecond},
		{1, errors.New("x"), 500 * time.Millisecond, time.Second},
		{3, errors.New("x"), 2 * time.Second, 4 * time.Second},
		{10, errors.New("x"), 4 * time.Second, 8 * time.Second},
		{62, errors.New("x"), 4 * time.Second, 8 * time.Second}, // no overflow
		{0, &llm.StatusError{Status: 429, RetryAfter: 3 * time.Second}, 3 * time.Second, 3 * time.Second},
		// Retry-After is taken as asked, beyond the backoff cap; wait
		// refuses what is over MaxWait.
		{0, fmt.Errorf("wrapped: %w", &llm.StatusError{Status: 429, RetryAfter: 30 * time.Second}), 30 * time.Second, 30 * time.Second},
	}
	for _, tt := range tests {
		for i := 0; i < 50; i++ {
			if d, _ := pol.delay(tt.n, tt.err); d < tt.min || d > tt.max {
				t.Fatalf("delay(%d, %v) = %v, want in [%v, %v]", tt.n, tt.err, d, tt.min, tt.max)
			}
		}
	}
}

// TestWrapTellsOfRetries: before each wait the consumer hears of the retry
// (which one, of how many, how long, why) as a DeltaRetry, and the answer
// that follows streams after it.
func TestWrapTellsOfRetries(t *testing.T) {
	f := &fakeProvider{errs: []error{&llm.StatusError{Status: 429, RetryAfter: 2 * time.Second}, &llm.StatusError{Status: 500}}}
	var got []llm.Delta
	_, err := Wrap(f, fastPolicy).Stream(context.Background(), &llm.Request{}, func(d llm.Delta) error {
		got = append(got, d)
		return nil
	})
	if err != nil || len(got) != 2 {
		t.Fatalf("err %v, deltas %+v", err, got)
	}
	first, second := got[0].Retry, got[1].Retry
	if got[0].Kind != llm.DeltaRetry || first == nil || first.Attempt != 1 || first.MaxRetries != 3 ||
		first.Delay != 2*time.Second || !strings.Contains(first.Err, "429") {
		t.Errorf("first retry: %+v %+v", got[0], first)
	}
	if second == nil || second.Attempt != 2 || !strings.Contains(second.Err, "500") || second.Delay <= 0 {
		t.Errorf("second retry: %+v", second)
	}
}

// With an observer on the context, each retry goes to it (and to the log
// at debug level only): a terminal shows a status line, not log lines.
func TestObserverTakesTheRetries(t *testing.T) {
	var logs strings.Builder
	pol := Policy{BaseDelay: time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil)), Sleep: noSleep}
	var seen []Attempt
	ctx := WithObserver(context.Background(), func(a Attempt) { seen = append(seen, a) })
	s503 := &llm.StatusError{Status: 503, Body: "overloaded"}
	calls := 0
	err := Do(ctx, pol, "model call", func() error {
		calls++
		if calls < 3 {
			return s503
		}
		return nil
	})
	if err != nil || len(seen) != 2 || seen[0].N != 1 || seen[1].N != 2 || seen[0].Max != 3 || seen[0].What != "model call" || seen[0].Err != s503 {
		t.Fatalf("err %v, attempts %+v", err, seen)
	}
	if strings.Contains(logs.String(), "WARN") {
		t.Errorf("warned although observed: %s", logs.String())
	}
	// Without one, the log warns as before.
	calls = 0
	Do(context.Background(), pol, "model call", func() error {
		calls++
		if calls < 2 {
			return s503
		}
		return nil
	})
	if !strings.Contains(logs.String(), "level=WARN msg=\"llm: retrying model call") {
		t.Errorf("no warning: %s", logs.String())
	}
}

// A model call's retry is told once: to the stream's consumer (which turns
// it into an event), not to the context's observer as well; the log only
// at debug level, a front end showing it.
func TestStreamRetryToldOnce(t *testing.T) {
	f := &fakeProvider{errs: []error{&llm.StatusError{Status: 503}}}
	var logs strings.Builder
	pol := fastPolicy
	pol.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	observed := 0
	ctx := WithObserver(context.Background(), func(Attempt) { observed++ })
	var deltas []llm.Delta
	if _, err := Wrap(f, pol).Stream(ctx, &llm.Request{}, func(d llm.Delta) error {
		deltas = append(deltas, d)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if observed != 0 || len(deltas) != 1 || deltas[0].Kind != llm.DeltaRetry {
		t.Errorf("observed %d, deltas %+v", observed, deltas)
	}
	if strings.Contains(logs.String(), "WARN") {
		t.Errorf("warned: %s", logs.String())
	}
}
