package transport

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/llm/sse"
)

// The errors every wire's stream decoder words alike, and the path of a
// streamed fragment to the user. The decoders keep their own loops: what
// ends a stream, and what is skipped, is each wire's.

// ReadFailure words a failure of the event-stream reader after n units
// (unit: "chunk", "event") of a stream whose end (its end marker, e.g.
// "[DONE]") never came. A body that ended early or broke mid-way (reset,
// abort) is llm.ErrStreamCut: the caller first checks whether it was
// really a cancellation. A line past the reader's bound is said as such.
func ReadFailure(err error, n int, unit, end string) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: no %s after %d %ss", llm.ErrStreamCut, end, n, unit)
	}
	if errors.Is(err, sse.ErrLineTooLong) {
		return fmt.Errorf("llm: stream %s %d: %w", unit, n+1, err)
	}
	return fmt.Errorf("%w after %d %ss: %w", llm.ErrStreamCut, n, unit, err)
}

// MalformedJSON is the error of a stream unit that is not the JSON it
// should be; where names it ("stream event 3 (message_start)"), and data,
// when not empty, is shown cut to 200 bytes. %v, not %w: a server that
// sends broken JSON will do it again, and wrapping could let the syntax
// error look like a transport failure worth a retry.
func MalformedJSON(where string, err error, data string) error {
	if data == "" {
		return fmt.Errorf("llm: malformed JSON in %s: %v", where, err)
	}
	return fmt.Errorf("llm: malformed JSON in %s: %v (data: %q)", where, err, Truncate(data, 200))
}

// StreamError is an error a server reported inside the stream, as final:
// its kind (a type, status or code; may be empty) and message, cut to 300
// bytes. An error that stands for a retryable HTTP answer is the wire's to
// make a StatusError.
func StreamError(kind, msg string) error {
	if kind == "" {
		return fmt.Errorf("llm: server error in stream: %s", Truncate(msg, 300))
	}
	return fmt.Errorf("llm: server error in stream (%s): %s", kind, Truncate(msg, 300))
}

// Forward is the path of every streamed fragment the user sees: the part
// of s that fits the cap is kept in buf and handed to onDelta (may be nil)
// as a delta of kind. The cap's error comes after that part was forwarded,
// so what was shown is what the answer holds.
func (c *AnswerCap) Forward(buf *strings.Builder, kind llm.DeltaKind, s string, onDelta func(llm.Delta) error) error {
	return c.ForwardDelta(buf, llm.Delta{Kind: kind, Text: s}, onDelta)
}

// ForwardDelta is Forward for a delta that carries more than its kind and
// text (a reasoning summary's index, say); d.Text is what the cap judges.
func (c *AnswerCap) ForwardDelta(buf *strings.Builder, d llm.Delta, onDelta func(llm.Delta) error) error {
	if d.Text == "" {
		return nil
	}
	s, capErr := c.Take(d.Text)
	if s == "" {
		return capErr
	}
	buf.WriteString(s)
	if onDelta != nil {
		d.Text = s
		if err := onDelta(d); err != nil {
			return err
		}
	}
	return capErr
}
