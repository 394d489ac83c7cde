package llm

import (
	"errors"
	"strings"
	"testing"

	"github.com/openheim/openheim/runtime/llm/llmtest"
)

// errCase is one scripted failure and how every provider must classify it:
// the retry policy and the agent's context fitting depend on these answers.
type errCase struct {
	name      string
	reply     llmtest.Reply
	contains  string
	retryable bool
	status    int // the StatusError's status; 0: none
	cut       bool
	long      bool // ErrContextTooLong
}

// checkErrorClass asserts err matches tc and never shows the API key.
func checkErrorClass(t *testing.T, err error, tc errCase, key string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), tc.contains) {
		t.Fatalf("err = %v, want it to contain %q", err, tc.contains)
	}
	if Retryable(err) != tc.retryable {
		t.Errorf("Retryable(%v) = %v", err, !tc.retryable)
	}
	var se *StatusError
	if got := errors.As(err, &se); got != (tc.status != 0) || (got && se.Status != tc.status) {
		t.Errorf("StatusError = %v", se)
	}
	if errors.Is(err, ErrStreamCut) != tc.cut {
		t.Errorf("ErrStreamCut = %v", !tc.cut)
	}
	if errors.Is(err, ErrContextTooLong) != tc.long {
		t.Errorf("ErrContextTooLong = %v", !tc.long)
	}
	if strings.Contains(err.Error(), key) || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("key leaked: %v", err)
	}
}
