package retry_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/llm/embedding"
	"github.com/openheim/openheim/runtime/llm/internal/wiretest"
	"github.com/openheim/openheim/runtime/llm/llmtest"
	"github.com/openheim/openheim/runtime/llm/openai"
	"github.com/openheim/openheim/runtime/llm/retry"
	"github.com/openheim/openheim/runtime/message"
)

// The retry loop against the real clients and the fake servers.

const testKey = "sk-test-SECRET-4242"

// setup starts a fake server with replies and an OpenAI client on it.
func setup(t *testing.T, cfg openai.Config, replies ...llmtest.Reply) (*llmtest.Server, llm.Provider) {
	t.Helper()
	return wiretest.Setup(t, cfg, openai.New, replies...)
}

func simpleRequest() *llm.Request {
	return &llm.Request{Model: "gpt-test", System: "be brief",
		Messages: []message.Message{{Role: message.RoleUser, Content: []message.Block{message.Text("hi")}}}}
}

// sleepRecorder is an injected retry.Policy.Sleep: it records each wait
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
	tests := []struct {
		name       string
		retryAfter string
		// dateIn, when set, makes retryAfter the HTTP date that far
		// ahead, written when the subtest starts (not when the table is
		// built: the subtests before it take time too).
		dateIn  time.Duration
		maxWait time.Duration
		// want is the recorded wait, exactly; for a date, up to a second
		// less (it has whole seconds) and less again by the time that
		// passed between writing it and the call's end, which is when it
		// was read at the latest. 0: the call fails without one.
		want     time.Duration
		wantErr  string
		requests int
	}{
		{"seconds", "30", 0, 0, 30 * time.Second, "", 2},
		{"seconds at the maximum", "60", 0, 0, 60 * time.Second, "", 2},
		{"fraction", "1.5", 0, 0, 1500 * time.Millisecond, "", 2},
		{"http date", "", 46 * time.Second, 0, 46 * time.Second, "", 2},
		{"configured maximum", "9", 0, 10 * time.Second, 9 * time.Second, "", 2},
		{"seconds over the default maximum", "61", 0, 0, 0, "the server asks to retry in 1m1s (Retry-After), longer than the 1m0s openheim waits at most (max_retry_wait_secs): not retrying", 1},
		{"seconds over a configured maximum", "30", 0, 10 * time.Second, 0, "asks to retry in 30s (Retry-After), longer than the 10s", 1},
		{"http date over the maximum", "", 2 * time.Hour, 0, 0, "(Retry-After), longer than the 1m0s openheim waits at most", 1},
		{"a day", "86400", 0, 0, 0, "asks to retry in 24h0m0s", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			rec := &sleepRecorder{}
			pol := retry.Policy{MaxWait: tt.maxWait, Logger: slog.New(slog.NewTextHandler(&logs, nil)), Sleep: rec.sleep}
			written := time.Now()
			if tt.dateIn != 0 {
				tt.retryAfter = written.Add(tt.dateIn).UTC().Format(http.TimeFormat)
			}
			srv, p := setup(t, openai.Config{APIKey: testKey},
				llmtest.Reply{Status: 429, RetryAfter: tt.retryAfter, ErrorBody: `{"error":{"message":"Rate limit reached"}}`}, ok)
			_, resp, err := wiretest.Collect(t, retry.Wrap(p, pol), simpleRequest())
			elapsed := time.Since(written)
			if n := len(srv.Requests()); n != tt.requests {
				t.Errorf("%d requests, want %d", n, tt.requests)
			}
			if tt.wantErr != "" {
				var se *llm.StatusError
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
			if tt.dateIn == 0 && (len(rec.waits) != 1 || rec.waits[0] != tt.want) {
				t.Fatalf("waits = %v, want one of %v", rec.waits, tt.want)
			}
			if least := tt.want - time.Second - elapsed; tt.dateIn != 0 && (len(rec.waits) != 1 || rec.waits[0] <= least || rec.waits[0] > tt.want) {
				t.Fatalf("waits = %v, want one in (%v, %v]", rec.waits, least, tt.want)
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
	pol := retry.Policy{BaseDelay: 4 * time.Second, MaxWait: 3 * time.Second,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)), Sleep: rec.sleep}
	_, p := setup(t, openai.Config{}, llmtest.Reply{Status: 503}, llmtest.Reply{Status: 503}, llmtest.Reply{Text: []string{"ok"}})
	if _, _, err := wiretest.Collect(t, retry.Wrap(p, pol), simpleRequest()); err != nil {
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
	e, err := embedding.New(embedding.Config{Kind: "openai", BaseURL: srv.URL(), Model: "m",
		Retry: retry.Policy{Logger: wiretest.FastPolicy.Logger, Sleep: rec.sleep}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Embed(context.Background(), []string{"a"})
	if err == nil || !strings.Contains(err.Error(), "asks to retry in 2m0s") || len(rec.waits) != 0 {
		t.Fatalf("err = %v, waits %v", err, rec.waits)
	}
}

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
			pol := wiretest.FastPolicy
			pol.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			srv, p := setup(t, openai.Config{APIKey: testKey, Timeout: tt.timeout}, tt.replies...)
			var text strings.Builder
			resp, err := retry.Wrap(p, pol).Stream(context.Background(), simpleRequest(), func(d llm.Delta) error {
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
