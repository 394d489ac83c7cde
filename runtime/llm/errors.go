package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/openheim/openheim/runtime/redact"
)

// ErrStreamCut is wrapped by the error of a stream that stopped before the
// server said it was finished (for OpenAI: before "data: [DONE]"). The reply
// is incomplete but the request was fine, so it is worth retrying.
var ErrStreamCut = errors.New("llm: stream cut before the end")

// maxErrorBody is how much of an error body StatusError keeps: enough for the
// server's message, not so much that a proxy's HTML page floods the logs.
const maxErrorBody = 2048

// StatusError is a non-2xx HTTP answer.
type StatusError struct {
	Status int
	// Body is the start of the response body (at most 2 KiB, on a UTF-8
	// boundary), for the server's own explanation.
	Body string
	// RetryAfter is the server's Retry-After hint; zero when absent.
	RetryAfter time.Duration
}

func (e *StatusError) Error() string {
	body := strings.Join(strings.Fields(e.Body), " ")
	if body == "" {
		body = http.StatusText(e.Status)
	}
	return fmt.Sprintf("HTTP %d: %s", e.Status, body)
}

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

// Retryable reports whether err is worth retrying: rate limits, overload and
// server errors, timeouts, connection failures and cut streams. Cancellation
// and other 4xx answers are final: the same request would fail again.
func Retryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var se *StatusError
	if errors.As(err, &se) {
		return retryableStatus(se.Status)
	}
	if errors.Is(err, ErrStreamCut) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		return false // a misspelt host does not heal
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return true // refused, reset, unreachable: the server may come back
	}
	// A server that closes the connection before answering surfaces as a
	// bare EOF from net/http.
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE)
}

func retryableStatus(code int) bool {
	switch code {
	case http.StatusRequestTimeout, http.StatusConflict, http.StatusTooEarly, http.StatusTooManyRequests:
		return true
	}
	return code >= 500 && code <= 599
}

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

// truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// secretsOf is what a client must never show of its own config: the key,
// every header value (gateways take tokens in headers of any name) and the
// base URL's userinfo and secret query values.
func secretsOf(key, baseURL string, headers map[string]string) *redact.Redactor {
	s := []string{key}
	for _, v := range headers {
		s = append(s, redact.HeaderSecrets(v)...)
	}
	return redact.New(append(s, redact.URLSecrets(baseURL)...)...)
}

// hide returns err with the client's secrets masked (a server echoing the
// key or a header, a token in the base URL's query), keeping errors.Is/As.
// A StatusError is rewritten in place of being wrapped so callers still see
// its fields.
func hide(err error, r *redact.Redactor) error {
	if err == nil || r.Empty() {
		return err
	}
	if se, ok := err.(*StatusError); ok {
		c := *se
		c.Body = r.String(c.Body)
		return &c
	}
	return r.Error(err)
}

// markContextTooLong wraps err with ErrContextTooLong when it is a 400 whose
// message (the JSON error.message, else the body) contains every phrase of
// any one of the given sets, lower-cased. Each API words "does not fit" its
// own way; the StatusError stays reachable with errors.As, and as a 400 it
// is not retried as is.
func markContextTooLong(err error, phrases ...[]string) error {
	var se *StatusError
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
			return fmt.Errorf("%w: %w", ErrContextTooLong, err)
		}
	}
	return err
}
