// Package sse is the tolerant Server-Sent-Events decoder shared by the LLM
// clients. It follows the WHATWG event-stream parsing rules, with the
// leniencies real model servers need: CRLF, CR or LF line ends (mixed), "data:"
// with or without the space, comment lines, and arbitrary read boundaries
// (inside a UTF-8 character or between the CR and LF of one line end).
//
// End of stream: the spec discards an event that is not followed by a blank
// line. This reader dispatches such a final event at EOF when every one of
// its lines was terminated by a line end, because several servers close the
// connection straight after "data: [DONE]\n". An unterminated final line may
// be a truncated fragment (a cut connection), so it is never parsed: the
// pending event is discarded and Next reports io.ErrUnexpectedEOF. A clean
// end is reported as io.EOF.
package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// Event is one dispatched event.
type Event struct {
	// Type is the "event:" field, "" when the event had none. The spec's
	// default "message" is left to callers so they can tell the two apart.
	Type string
	// Data is the event's data lines joined with "\n".
	Data string
	// ID is the stream's last event ID: per spec it persists across events
	// until an "id:" field changes it.
	ID string
}

// DefaultMaxLine caps a line, and an event's joined data, in bytes. Model
// replies never come close; the cap exists so a broken or hostile server
// cannot make the client buffer without bound.
const DefaultMaxLine = 8 << 20

// ErrLineTooLong is returned (wrapped) when a line or an event's data exceeds
// the reader's MaxLine.
var ErrLineTooLong = errors.New("sse: line too long")

const initialBuf = 4096

// Reader decodes events from an underlying byte stream. It is not safe for
// concurrent use.
type Reader struct {
	// MaxLine is the cap on a line and on an event's data; set it before the
	// first Next. Zero or negative means DefaultMaxLine.
	MaxLine int
	// Other, when set, is called with every line that is neither a comment
	// nor a field the spec knows (data, event, id, retry), an unterminated
	// last line included. The spec ignores such lines; a wire can see
	// through it a server writing outside the event-stream format, such as
	// Gemini's raw JSON error object after its events. The slice is only
	// valid during the call.
	Other func(line []byte)

	r          io.Reader
	buf        []byte
	start, end int   // unread bytes are buf[start:end]
	skipLF     bool  // the previous line ended in CR: a following LF belongs to it
	err        error // sticky error from r (io.EOF included)
	fail       error // sticky decoding error
	sawLine    bool  // false until the first line, where a BOM may appear

	data    []byte
	hasData bool // spec: the data buffer is non-empty (even "data:" alone counts)
	typ     string
	id      string
}

// NewReader returns a Reader decoding events from r.
func NewReader(r io.Reader) *Reader { return &Reader{r: r} }

func (r *Reader) maxLine() int {
	if r.MaxLine <= 0 {
		return DefaultMaxLine
	}
	return r.MaxLine
}

// Next returns the next event. It returns io.EOF after the last event of a
// cleanly ended stream, io.ErrUnexpectedEOF when the stream stops inside a
// line, an error wrapping ErrLineTooLong past the cap, or the underlying
// reader's error. Errors are sticky.
func (r *Reader) Next() (Event, error) {
	if r.fail != nil {
		return Event{}, r.fail
	}
	for {
		line, err := r.readLine()
		if err != nil {
			if err == io.EOF && r.hasData {
				// Every line of the pending event was terminated: dispatch it
				// now; the next call sees the sticky EOF with nothing pending.
				return r.dispatch(), nil
			}
			r.reset()
			r.fail = err
			return Event{}, err
		}
		if len(line) == 0 {
			if r.hasData {
				return r.dispatch(), nil
			}
			r.typ = "" // spec: a blank line without data drops the event type
			continue
		}
		if err := r.field(line); err != nil {
			r.reset()
			r.fail = err
			return Event{}, err
		}
	}
}

func (r *Reader) dispatch() Event {
	ev := Event{Type: r.typ, Data: string(r.data), ID: r.id}
	r.reset()
	return ev
}

func (r *Reader) reset() {
	r.data = r.data[:0]
	r.hasData = false
	r.typ = ""
}

var bom = []byte{0xEF, 0xBB, 0xBF}

func (r *Reader) field(line []byte) error {
	if !r.sawLine {
		r.sawLine = true
		line = bytes.TrimPrefix(line, bom)
	}
	if len(line) == 0 || line[0] == ':' {
		return nil // comment (": keep-alive") or a line that was only a BOM
	}
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "data":
		if r.hasData {
			r.data = append(r.data, '\n')
		}
		r.data = append(r.data, value...)
		r.hasData = true
		if len(r.data) > r.maxLine() {
			return fmt.Errorf("%w: event data longer than %d bytes", ErrLineTooLong, r.maxLine())
		}
	case "event":
		r.typ = string(value)
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			r.id = string(value)
		}
	case "retry":
	default:
		if r.Other != nil {
			r.Other(line)
		}
	}
	// "retry" and unknown fields are otherwise ignored, as the spec says.
	return nil
}

// knownField reports whether line is a comment or a field of the spec.
func knownField(line []byte) bool {
	if len(line) > 0 && line[0] == ':' {
		return true
	}
	name, _, _ := bytes.Cut(line, []byte(":"))
	switch string(name) {
	case "data", "event", "id", "retry":
		return true
	}
	return false
}

// readLine returns the next line without its terminator. The slice is only
// valid until the next call.
func (r *Reader) readLine() ([]byte, error) {
	max := r.maxLine()
	for {
		if r.skipLF && r.start < r.end {
			if r.buf[r.start] == '\n' {
				r.start++
			}
			r.skipLF = false
		}
		if r.start < r.end {
			if line, ok := r.cutLine(); ok {
				return line, nil
			}
			if r.end-r.start > max {
				return nil, fmt.Errorf("%w: more than %d bytes without a line end", ErrLineTooLong, max)
			}
		}
		if r.err != nil {
			if r.err == io.EOF && r.start < r.end {
				if tail := r.buf[r.start:r.end]; r.Other != nil && !knownField(tail) {
					r.Other(tail)
				}
				return nil, io.ErrUnexpectedEOF
			}
			return nil, r.err
		}
		r.fill(max)
	}
}

// cutLine takes one terminated line from the buffer, if there is one.
func (r *Reader) cutLine() ([]byte, bool) {
	b := r.buf[r.start:r.end]
	// Two IndexByte scans beat one byte loop: both are vectorised.
	i := bytes.IndexByte(b, '\n')
	lim := b
	if i >= 0 {
		lim = b[:i]
	}
	if j := bytes.IndexByte(lim, '\r'); j >= 0 {
		i = j
		// The LF of a CRLF may not have arrived yet; skip it when it does
		// rather than wait for it, so CR-only streams are not delayed.
		r.skipLF = true
	}
	if i < 0 {
		return nil, false
	}
	r.start += i + 1
	return b[:i], true
}

// fill reads more bytes, compacting and growing the buffer as needed.
func (r *Reader) fill(max int) {
	if r.start > 0 {
		n := copy(r.buf, r.buf[r.start:r.end])
		r.start, r.end = 0, n
	}
	if r.end == len(r.buf) {
		// Room for max+1 bytes lets readLine tell "exactly max" from "too long".
		size := 2 * len(r.buf)
		if size < initialBuf {
			size = initialBuf
		}
		if size > max+1 {
			size = max + 1
		}
		nb := make([]byte, size)
		copy(nb, r.buf[:r.end])
		r.buf = nb
	}
	for tries := 0; tries < 100; tries++ {
		n, err := r.r.Read(r.buf[r.end:])
		r.end += n
		if err != nil {
			r.err = err
			return
		}
		if n > 0 {
			return
		}
	}
	r.err = io.ErrNoProgress
}
