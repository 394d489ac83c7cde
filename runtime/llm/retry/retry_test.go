package llm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/llm/llmtest"
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

func (f *fakeProvider) Stream(ctx context.Context, req *Request, onDelta func(Delta) error) (*Response, error) {
	f.mu.Lock()
	i := f.calls
	f.calls++
	f.mu.Unlock()
	if i < len(f.forwards) && f.forwards[i] {
		if err := onDelta(Delta{Kind: DeltaText, Text: "partial"}); err != nil {
			return nil, err
		}
	}
	if i < len(f.errs) && f.errs[i] != nil {
		return nil, f.errs[i]
	}
	return &Response{Content: []message.Block{message.Text("ok")}, StopReason: StopEndTurn}, nil
}

// fastPolicy backs off for milliseconds and takes no Retry-After wait.
var fastPolicy = RetryPolicy{BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond,
	Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Sleep: noSleep}

func noSleep(ctx context.Context, _ time.Duration) error { return ctx.Err() }

func TestWithRetryFake(t *testing.T) {
	s429 := &StatusError{Status: 429}
	s500 := &StatusError{Status: 500}
	cut := fmt.Errorf("%w: x", ErrStreamCut)
	tests := []struct {
		name      string
		errs      []error
		forwards  []bool
		pol       RetryPolicy
		wantCalls int
		wantErr   string // "" means success
	}{
		{"success", nil, nil, fastPolicy, 1, ""},
		{"429 then ok", []error{s429}, nil, fastPolicy, 2, ""},
		{"500 x4 gives up after 3 retries", []error{s500, s500, s500, s500}, nil, fastPolicy, 4, "HTTP 500"},
		{"cut then ok", []error{cut}, nil, fastPolicy, 2, ""},
		{"400 not retried", []error{&StatusError{Status: 400}}, nil, fastPolicy, 1, "HTTP 400"},
		{"cut after forwarding not retried", []error{cut}, []bool{true}, fastPolicy, 1, "stream cut"},
		{"earlier attempts did not forward", []error{s500, s500}, []bool{false, false, true}, fastPolicy, 3, ""},
		{"plain error not retried", []error{errors.New("bad")}, nil, fastPolicy, 1, "bad"},
		{"negative MaxRetries disables", []error{s500}, nil, RetryPolicy{MaxRetries: -1, Logger: fastPolicy.Logger}, 1, "HTTP 500"},
		{"MaxRetries 1", []error{s500, s500}, nil, RetryPolicy{MaxRetries: 1, BaseDelay: time.Millisecond, Logger: fastPolicy.Logger}, 2, "HTTP 500"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeProvider{errs: tt.errs, forwards: tt.forwards}
			_, err := WithRetry(f, tt.pol).Stream(context.Background(), &Request{}, func(Delta) error { return nil })
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
	f := &fakeProvider{errs: []error{&StatusError{Status: 503}, &StatusError{Status: 503}}}
	pol := RetryPolicy{BaseDelay: time.Hour, MaxDelay: time.Hour, Logger: fastPolicy.Logger}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err := WithRetry(f, pol).Stream(ctx, &Request{}, nil)
	if !errors.Is(err, context.Canceled) || time.Since(start) > 2*time.Second || f.calls != 1 {
		t.Fatalf("err = %v after %v, %d calls", err, time.Since(start), f.calls)
	}
	if !strings.Contains(err.Error(), "HTTP 503") {
		t.Errorf("the last error should be kept in the message: %v", err)
	}
}

func TestRetryDelay(t *testing.T) {
	pol := RetryPolicy{}.withDefaults()
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
		{0, &StatusError{Status: 429, RetryAfter: 3 * time.Second}, 3 * time.Second, 3 * time.Second},
		// Retry-After is taken as asked, beyond the backoff cap; wait
		// refuses what is over MaxWait.
		{0, fmt.Errorf("wrapped: %w", &StatusError{Status: 429, RetryAfter: 30 * time.Second}), 30 * time.Second, 30 * time.Second},
	}
	for _, tt := range tests {
		for i := 0; i < 50; i++ {
			if d, _ := pol.delay(tt.n, tt.err); d < tt.min || d > tt.max {
				t.Fatalf("delay(%d, %v) = %v, want in [%v, %v]", tt.n, tt.err, d, tt.min, tt.max)
			}
		}
	}
}

func TestRetryable(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{nil, false},
		{&StatusError{Status: 408}, true},
		{&StatusError{Status: 409}, true},
		{&StatusError{Status: 425}, true},
		{&StatusError{Status: 429}, true},
		{&StatusError{Status: 500}, true},
		{&StatusError{Status: 529}, true},
		{&StatusError{Status: 400}, false},
		{&StatusError{Status: 401}, false},
		{&StatusError{Status: 404}, false},
		{fmt.Errorf("x: %w", &StatusError{Status: 502}), true},
		{context.Canceled, false},
		{fmt.Errorf("%w: %w", ErrStreamCut, context.Canceled), false},
		{context.DeadlineExceeded, true},
		{&timeoutError{d: time.Second}, true},
		{fmt.Errorf("%w: eof", ErrStreamCut), true},
		{io.EOF, true},
		{io.ErrUnexpectedEOF, true},
		{&net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, true},
		{syscall.ECONNRESET, true},
		{&net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "x", IsNotFound: true}}, false},
		{errors.New("malformed JSON"), false},
	}
	for _, tt := range tests {
		if got := Retryable(tt.err); got != tt.want {
			t.Errorf("Retryable(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

func TestStatusError(t *testing.T) {
	tests := []struct {
		e    StatusError
		want string
	}{
		{StatusError{Status: 429, Body: "{\"error\":\n  \"slow down\"}"}, `HTTP 429: {"error": "slow down"}`},
		{StatusError{Status: 503}, "HTTP 503: Service Unavailable"},
	}
	for _, tt := range tests {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"": 0, "0": 0, "2": 2 * time.Second, "1.5": 1500 * time.Millisecond, "-1": 0, "soon": 0,
		"Thu, 01 Jan 2026 00:00:10 GMT": 10 * time.Second, "Wed, 31 Dec 2025 00:00:00 GMT": 0,
	} {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", in, got, want)
		}
	}
	if got := truncate("héllo", 2); got != "h…" {
		t.Errorf("truncate = %q", got)
	}
}

// Against the real client and the fake server.

func TestWithRetryOpenAI(t *testing.T) {
	ok := llmtest.Reply{Text: []string{"fine"}}
	tests := []struct {
		name         string
		replies      []llmtest.Reply
		wantRequests int
		wantText     string
		wantErr      string
		timeout      time.Duration // default: generous, so a loaded machine does not add retries
	}{
		{"429 then success", []llmtest.Reply{{Status: 429, RetryAfter: "0"}, ok}, 2, "fine", "", 0},
		{"500 x4 gives up", []llmtest.Reply{{Status: 500}, {Status: 500}, {Status: 500}, {Status: 500}, ok}, 4, "", "HTTP 500", 0},
		{"cut stream retried", []llmtest.Reply{{Text: []string{"a"}, CutAfter: 1}, ok}, 2, "fine", "", 0},
		{"cut after text not retried", []llmtest.Reply{{Text: []string{"a", "b"}, CutAfter: 2}, ok}, 1, "", "stream cut", 0},
		{"malformed not retried", []llmtest.Reply{{Malformed: true}, ok}, 1, "", "malformed JSON", 0},
		{"idle timeout retried", []llmtest.Reply{{Hang: true}, ok}, 2, "fine", "", 200 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			pol := fastPolicy
			pol.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			srv, p := setup(t, OpenAIConfig{APIKey: testKey, Timeout: tt.timeout}, tt.replies...)
			var text strings.Builder
			resp, err := WithRetry(p, pol).Stream(context.Background(), simpleRequest(), func(d Delta) error {
				text.WriteString(d.Text)
				return nil
			})
			if n := len(srv.Requests()); n != tt.wantRequests {
				t.Errorf("%d requests, want %d", n, tt.wantRequests)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
			} else if err != nil || resp.Content[0].Text != tt.wantText || text.String() != tt.wantText {
				t.Fatalf("got %v (streamed %q), %v", resp, text.String(), err)
			}
			if retries := strings.Count(logs.String(), "level=WARN"); retries != tt.wantRequests-1 {
				t.Errorf("%d retry log lines, want %d:\n%s", retries, tt.wantRequests-1, logs.String())
			}
			if strings.Contains(logs.String(), testKey) {
				t.Errorf("key in logs: %s", logs.String())
			}
		})
	}
}
