package llm

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/llm/llmtest"
)

// sleepRecorder is an injected RetryPolicy.Sleep: it records each wait
// instead of taking it.
type sleepRecorder struct{ waits []time.Duration }

func (s *sleepRecorder) sleep(ctx context.Context, d time.Duration) error {
	s.waits = append(s.waits, d)
	return ctx.Err()
}

// TestRetryAfterHonoured runs the real client against the fake server
// answering 429 with Retry-After, in both of the header's forms.
func TestRetryAfterHonoured(t *testing.T) {
	ok := llmtest.Reply{Text: []string{"fine"}}
	date := func(d time.Duration) string { return time.Now().Add(d).UTC().Format(http.TimeFormat) }
	tests := []struct {
		name       string
		retryAfter string
		maxWait    time.Duration
		// want is the recorded wait, at most a second more than it (an
		// HTTP date has whole seconds); 0: the call fails without one.
		want     time.Duration
		wantErr  string
		requests int
	}{
		{"seconds", "30", 0, 30 * time.Second, "", 2},
		{"seconds at the maximum", "60", 0, 60 * time.Second, "", 2},
		{"fraction", "1.5", 0, 1500 * time.Millisecond, "", 2},
		{"http date", date(46 * time.Second), 0, 45 * time.Second, "", 2},
		{"configured maximum", "9", 10 * time.Second, 9 * time.Second, "", 2},
		{"seconds over the default maximum", "61", 0, 0, "the server asks to retry in 1m1s (Retry-After), longer than the 1m0s openheim waits at most (max_retry_wait_secs): not retrying", 1},
		{"seconds over a configured maximum", "30", 10 * time.Second, 0, "asks to retry in 30s (Retry-After), longer than the 10s", 1},
		{"http date over the maximum", date(2 * time.Hour), 0, 0, "(Retry-After), longer than the 1m0s openheim waits at most", 1},
		{"a day", "86400", 0, 0, "asks to retry in 24h0m0s", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			rec := &sleepRecorder{}
			pol := RetryPolicy{MaxWait: tt.maxWait, Logger: slog.New(slog.NewTextHandler(&logs, nil)), Sleep: rec.sleep}
			srv, p := setup(t, OpenAIConfig{APIKey: testKey},
				llmtest.Reply{Status: 429, RetryAfter: tt.retryAfter, ErrorBody: `{"error":{"message":"Rate limit reached"}}`}, ok)
			_, resp, err := collect(t, WithRetry(p, pol), simpleRequest())
			if n := len(srv.Requests()); n != tt.requests {
				t.Errorf("%d requests, want %d", n, tt.requests)
			}
			if tt.wantErr != "" {
				var se *StatusError
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.As(err, &se) || se.Status != 429 {
					t.Fatalf("err = %v, want %q wrapping the 429", err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), "HTTP 429: ") || len(rec.waits) != 0 || logs.Len() != 0 {
					t.Errorf("err = %v, waits %v, logs %q", err, rec.waits, logs.String())
				}
				return
			}
			if err != nil || resp.Content[0].Text != "fine" {
				t.Fatalf("resp = %v, err = %v", resp, err)
			}
			if len(rec.waits) != 1 || rec.waits[0] < tt.want || rec.waits[0] > tt.want+time.Second {
				t.Fatalf("waits = %v, want one of %v", rec.waits, tt.want)
			}
			line := strings.TrimSpace(logs.String())
			want := "as the server asked (Retry-After)"
			if strings.Count(line, "\n") != 0 || !strings.Contains(line, `msg="llm: retrying model call in `) ||
				!strings.Contains(line, want) || !strings.Contains(line, "Rate limit reached") {
				t.Errorf("warning = %q, want one line saying the wait and %q", line, want)
			}
		})
	}
}

// TestRetryBackoffWarning: without Retry-After the warning says the wait
// is backoff, and backoff never exceeds MaxWait.
func TestRetryBackoffWarning(t *testing.T) {
	var logs bytes.Buffer
	rec := &sleepRecorder{}
	pol := RetryPolicy{BaseDelay: 4 * time.Second, MaxWait: 3 * time.Second,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)), Sleep: rec.sleep}
	_, p := setup(t, OpenAIConfig{}, llmtest.Reply{Status: 503}, llmtest.Reply{Status: 503}, llmtest.Reply{Text: []string{"ok"}})
	if _, _, err := collect(t, WithRetry(p, pol), simpleRequest()); err != nil {
		t.Fatal(err)
	}
	if len(rec.waits) != 2 {
		t.Fatalf("waits = %v", rec.waits)
	}
	for _, w := range rec.waits {
		if w < 1500*time.Millisecond || w > 3*time.Second {
			t.Errorf("wait %v outside [1.5s, 3s]", w)
		}
	}
	if n := strings.Count(logs.String(), "(backoff)"); n != 2 {
		t.Errorf("warnings = %q", logs.String())
	}
}

// TestRetryAfterEmbeddings: the embeddings client shares the policy.
func TestRetryAfterEmbeddings(t *testing.T) {
	srv := llmtest.NewEmbedServer()
	defer srv.Close()
	srv.FailNext(429, "120")
	rec := &sleepRecorder{}
	e, err := NewEmbedder(EmbedConfig{Kind: "openai", BaseURL: srv.URL(), Model: "m",
		Retry: RetryPolicy{Logger: fastPolicy.Logger, Sleep: rec.sleep}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Embed(context.Background(), []string{"a"})
	if err == nil || !strings.Contains(err.Error(), "asks to retry in 2m0s") || len(rec.waits) != 0 {
		t.Fatalf("err = %v, waits %v", err, rec.waits)
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
