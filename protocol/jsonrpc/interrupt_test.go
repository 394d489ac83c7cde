package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"
)

// chanStream reads from in until InterruptRead; Read records whether it
// ran on Run's own goroutine (readInline) or on one Run started.
type chanStream struct {
	in        chan json.RawMessage
	out       chan json.RawMessage
	interrupt chan struct{}
	stacks    chan string
}

func newChanStream() *chanStream {
	return &chanStream{in: make(chan json.RawMessage), out: make(chan json.RawMessage, 8),
		interrupt: make(chan struct{}), stacks: make(chan string, 8)}
}

func (c *chanStream) Read() (json.RawMessage, error) {
	buf := make([]byte, 8<<10)
	select {
	case c.stacks <- string(buf[:runtime.Stack(buf, false)]):
	default:
	}
	select {
	case m := <-c.in:
		return m, nil
	case <-c.interrupt:
		return nil, errors.New("read interrupted")
	}
}

func (c *chanStream) Write(m json.RawMessage) error { c.out <- m; return nil }
func (c *chanStream) Close() error                  { return nil }
func (c *chanStream) InterruptRead()                { close(c.interrupt) }

// TestRunReadsInlineWhenInterruptible: a stream that can interrupt its
// Read is read on Run's goroutine (no goroutine of its own), and ctx
// ending interrupts the Read: Run returns ctx's error after answering
// what it was handling.
func TestRunReadsInlineWhenInterruptible(t *testing.T) {
	st := newChanStream()
	started := make(chan struct{})
	h := funcHandler{req: func(ctx context.Context, method string, _ json.RawMessage) (any, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	p := NewPeer(st, h, WithLogger(quiet))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	st.in <- json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"slow"}`)
	<-started
	stack := <-st.stacks
	if !strings.Contains(stack, "(*Peer).readInline") || strings.Contains(stack, "readAside") {
		t.Fatalf("Read did not run on Run's goroutine:\n%s", stack)
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Run: %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after ctx ended")
	}
	// The request in flight was answered (cancelled) before Run returned.
	select {
	case m := <-st.out:
		if !strings.Contains(string(m), `"id":1`) || !strings.Contains(string(m), `"error"`) {
			t.Fatalf("answer = %s", m)
		}
	default:
		t.Fatal("the request in flight was not answered")
	}
}

// TestRunInlineEOF: the stream ending on its own ends Run with nil.
func TestRunInlineEOF(t *testing.T) {
	st := &eofStream{chanStream: newChanStream()}
	if err := NewPeer(st, nil, WithLogger(quiet)).Run(context.Background()); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

type eofStream struct{ *chanStream }

func (e *eofStream) Read() (json.RawMessage, error) { return nil, io.EOF }
