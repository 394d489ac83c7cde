// Package wiretest holds what the tests of every wire package share: a
// client on the fake server, how a provider must classify its errors (the
// retry policy and the agent's context fitting depend on it), collecting a
// call's deltas, and a retry policy that takes no real waits.
package wiretest

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/llm/llmtest"
	"github.com/openheim/openheim/runtime/llm/retry"
)

// ErrCase is one scripted failure and how every provider must classify it.
type ErrCase struct {
	Name      string
	Reply     llmtest.Reply
	Contains  string
	Retryable bool
	Status    int // the StatusError's status; 0: none
	Cut       bool
	Long      bool // ErrContextTooLong
}

// CheckErrorClass asserts err matches tc and never shows the API key.
func CheckErrorClass(t *testing.T, err error, tc ErrCase, key string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), tc.Contains) {
		t.Fatalf("err = %v, want it to contain %q", err, tc.Contains)
	}
	if llm.Retryable(err) != tc.Retryable {
		t.Errorf("Retryable(%v) = %v", err, !tc.Retryable)
	}
	var se *llm.StatusError
	if got := errors.As(err, &se); got != (tc.Status != 0) || (got && se.Status != tc.Status) {
		t.Errorf("StatusError = %v", se)
	}
	if errors.Is(err, llm.ErrStreamCut) != tc.Cut {
		t.Errorf("ErrStreamCut = %v", !tc.Cut)
	}
	if errors.Is(err, llm.ErrContextTooLong) != tc.Long {
		t.Errorf("ErrContextTooLong = %v", !tc.Long)
	}
	if strings.Contains(err.Error(), key) || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("key leaked: %v", err)
	}
}

// Collect runs one call and returns the forwarded deltas.
func Collect(t *testing.T, p llm.Provider, req *llm.Request) ([]llm.Delta, *llm.Response, error) {
	t.Helper()
	var ds []llm.Delta
	resp, err := p.Stream(context.Background(), req, func(d llm.Delta) error {
		ds = append(ds, d)
		return nil
	})
	return ds, resp, err
}

// FastPolicy backs off for milliseconds and takes no Retry-After wait.
var FastPolicy = retry.Policy{BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond,
	Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Sleep: NoSleep}

// NoSleep is a retry.Policy.Sleep that returns at once.
func NoSleep(ctx context.Context, _ time.Duration) error { return ctx.Err() }
