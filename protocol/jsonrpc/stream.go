package jsonrpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// MaxLineSize is the longest message a line stream accepts (64 MiB).
const MaxLineSize = 64 << 20

// Stream carries JSON-RPC messages, one per Read or Write. Read is called
// by one goroutine at a time; Write must be safe for concurrent use and
// write each message whole.
type Stream interface {
	Read() (json.RawMessage, error)
	Write(json.RawMessage) error
	Close() error
}

// ReadInterrupter is a Stream whose blocked Read can be made to return at
// once, with an error, without closing what the stream writes to (a
// socket's read deadline). Peer.Run then reads on its caller's goroutine
// instead of starting one (a server holding a thousand idle connections
// holds a thousand goroutines fewer), and when its ctx ends it interrupts
// the read rather than closing the stream, so the answers of the requests
// in flight still go out. A stream that cannot promise this (a pipe's Read
// may ignore Close) must not implement it.
type ReadInterrupter interface {
	Stream
	InterruptRead()
}

type lineStream struct {
	sc *bufio.Scanner
	c  io.Closer

	mu sync.Mutex
	w  io.Writer
}

// NewLineStream frames messages as NDJSON: one message per line, lines up
// to MaxLineSize, blank lines skipped. Write appends "\n" and writes the
// line in one call under a mutex. c may be nil; Close then does nothing.
func NewLineStream(r io.Reader, w io.Writer, c io.Closer) Stream {
	sc := bufio.NewScanner(r)
	// +2 leaves room for the line's "\r\n" so a MaxLineSize message fits.
	sc.Buffer(make([]byte, 0, 64<<10), MaxLineSize+2)
	sc.Split(scanLines)
	return &lineStream{sc: sc, w: w, c: c}
}

// ErrLineTooLong is returned by a line stream's Read when a line exceeds
// MaxLineSize; it wraps bufio.ErrTooLong.
var ErrLineTooLong = fmt.Errorf("jsonrpc: message line longer than %d bytes: %w", MaxLineSize, bufio.ErrTooLong)

// scanLines is bufio.ScanLines with the MaxLineSize limit on the line
// itself (the scanner's own limit counts the line ending too).
func scanLines(data []byte, atEOF bool) (int, []byte, error) {
	adv, tok, err := bufio.ScanLines(data, atEOF)
	if len(tok) > MaxLineSize {
		return 0, nil, ErrLineTooLong
	}
	return adv, tok, err
}

func (s *lineStream) Read() (json.RawMessage, error) {
	for s.sc.Scan() {
		line := s.sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		return bytes.Clone(line), nil
	}
	if err := s.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, ErrLineTooLong
		}
		return nil, err
	}
	return nil, io.EOF
}

func (s *lineStream) Write(msg json.RawMessage) error {
	if bytes.ContainsAny(msg, "\r\n") {
		// A message must stay on one line: compact it (JSON whitespace
		// outside strings is the only place a raw newline can be).
		var buf bytes.Buffer
		if err := json.Compact(&buf, msg); err != nil {
			return fmt.Errorf("jsonrpc: write: %w", err)
		}
		msg = buf.Bytes()
	}
	line := make([]byte, 0, len(msg)+1)
	line = append(append(line, msg...), '\n')
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := s.w.Write(line)
	return err
}

func (s *lineStream) Close() error {
	if s.c == nil {
		return nil
	}
	return s.c.Close()
}
