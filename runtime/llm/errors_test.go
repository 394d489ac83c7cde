package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
)

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
}
