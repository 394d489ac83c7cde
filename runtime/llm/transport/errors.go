package transport

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/redact"
)

// MaxErrorBody is how much of an error body a StatusError keeps: enough for
// the server's message, not so much that a proxy's HTML page floods the logs.
const MaxErrorBody = 2048

// timeoutError is returned when the server goes quiet for longer than the
// configured timeout. It satisfies net.Error so generic timeout checks agree.
type timeoutError struct {
	phase string
	d     time.Duration
}

func (e *timeoutError) Error() string {
	return fmt.Sprintf("llm: timeout: no data from the server for %v (%s)", e.d, e.phase)
}
func (e *timeoutError) Timeout() bool   { return true }
func (e *timeoutError) Temporary() bool { return true }

// maxRetryAfter bounds what parseRetryAfter returns, so absurd values do
// not overflow a Duration; anything this long is refused by the retry
// policy anyway.
const maxRetryAfter = 365 * 24 * time.Hour

// parseRetryAfter reads a Retry-After header: delay-seconds or an HTTP date
// (RFC 9110 10.2.3). Zero means absent, unreadable or already past. Long
// waits are kept as asked: the retry policy decides what it accepts.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if !(secs > 0) { // also NaN
			return 0
		}
		if secs >= maxRetryAfter.Seconds() {
			return maxRetryAfter
		}
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return min(t.Sub(now), maxRetryAfter)
	}
	return 0
}

// Truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// Secrets is what a client must never show of its own config: the key,
// every header value (gateways take tokens in headers of any name) and the
// base URL's userinfo and secret query values.
func Secrets(key, baseURL string, headers map[string]string) *redact.Redactor {
	s := []string{key}
	for _, v := range headers {
		s = append(s, redact.HeaderSecrets(v)...)
	}
	return redact.New(append(s, redact.URLSecrets(baseURL)...)...)
}

// Hide returns err with the client's secrets masked (a server echoing the
// key or a header, a token in the base URL's query), keeping errors.Is/As.
// A StatusError is rewritten in place of being wrapped so callers still see
// its fields.
func Hide(err error, r *redact.Redactor) error {
	if err == nil || r.Empty() {
		return err
	}
	if se, ok := err.(*llm.StatusError); ok {
		c := *se
		c.Body = r.String(c.Body)
		return &c
	}
	return r.Error(err)
}

// MarkContextTooLong wraps err with llm.ErrContextTooLong when it is a 400
// whose message (the JSON error.message, else the body) contains every phrase
// of any one of the given sets, lower-cased. Each API words "does not fit"
// its own way; the StatusError stays reachable with errors.As, and as a 400
// it is not retried as is.
func MarkContextTooLong(err error, phrases ...[]string) error {
	var se *llm.StatusError
	if !errors.As(err, &se) || se.Status != http.StatusBadRequest {
		return err
	}
	msg := se.Body
	var body struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(se.Body), &body) == nil && body.Error.Message != "" {
		msg = body.Error.Message
	}
	msg = strings.ToLower(msg)
	for _, set := range phrases {
		all := true
		for _, p := range set {
			all = all && strings.Contains(msg, p)
		}
		if all {
			return fmt.Errorf("%w: %w", llm.ErrContextTooLong, err)
		}
	}
	return err
}
