package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"
)

// ErrStreamCut is wrapped by the error of a stream that stopped before the
// server said it was finished (for OpenAI: before "data: [DONE]"). The reply
// is incomplete but the request was fine, so it is worth retrying.
var ErrStreamCut = errors.New("llm: stream cut before the end")

// StatusError is a non-2xx HTTP answer. Every wire reports one so, and the
// retry policy and the agent read it without knowing the wire.
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
