package transport

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/llm"
)

const testKey = "sk-test-SECRET-4242"

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"": 0, "0": 0, "2": 2 * time.Second, "1.5": 1500 * time.Millisecond, "-1": 0, "soon": 0,
		"Thu, 01 Jan 2026 00:00:10 GMT": 10 * time.Second, "Wed, 31 Dec 2025 00:00:00 GMT": 0,
	} {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", in, got, want)
		}
	}
	if got := Truncate("héllo", 2); got != "h…" {
		t.Errorf("truncate = %q", got)
	}
}

func TestParseRetryAfterLong(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"90000":                            90000 * time.Second, // over a day: kept, the policy refuses it
		"1e30":                             maxRetryAfter,
		"NaN":                              0,
		"Inf":                              maxRetryAfter,
		"Fri, 01 Jan 2027 00:00:00 GMT":    maxRetryAfter,
		"Thu, 01 Jan 2026 01:00:00 GMT":    time.Hour,
		"Thursday, 01-Jan-26 00:00:30 GMT": 30 * time.Second, // RFC 850, still accepted
	} {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestTimeoutErrorRetryable: the idle watchdog's error is one the retry
// policy retries.
func TestTimeoutErrorRetryable(t *testing.T) {
	if !llm.Retryable(&timeoutError{d: time.Second}) {
		t.Fatal("a timeout should be retryable")
	}
}

func TestHide(t *testing.T) {
	r := Secrets(testKey, "", nil)
	base := errors.New("dial http://h/?k=" + testKey)
	err := Hide(base, r)
	if strings.Contains(err.Error(), testKey) || !errors.Is(err, base) {
		t.Fatalf("hide = %v", err)
	}
	se := Hide(&llm.StatusError{Status: 401, Body: "bad " + testKey}, r)
	var got *llm.StatusError
	if !errors.As(se, &got) || got.Status != 401 || strings.Contains(se.Error(), testKey) {
		t.Fatalf("status hide = %#v", se)
	}
	if Hide(base, nil) != base || Hide(nil, r) != nil {
		t.Fatal("hide must pass through")
	}
}
