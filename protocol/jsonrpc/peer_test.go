package jsonrpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var quiet = slog.New(slog.DiscardHandler)

// funcHandler adapts functions to Handler.
type funcHandler struct {
	req  func(ctx context.Context, method string, params json.RawMessage) (any, error)
	note func(ctx context.Context, method string, params json.RawMessage)
}

func (h funcHandler) Request(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if h.req == nil {
		return nil, NewError(MethodNotFound, method)
	}
	return h.req(ctx, method, params)
}

func (h funcHandler) Notification(ctx context.Context, method string, params json.RawMessage) {
	if h.note != nil {
		h.note(ctx, method, params)
	}
}

type closers []io.Closer

func (cs closers) Close() error {
	for _, c := range cs {
		c.Close()
	}
	return nil
}

// recorder keeps a copy of every message written through a stream.
type recorder struct {
	Stream
	mu  sync.Mutex
	out []json.RawMessage
}

func (r *recorder) Write(m json.RawMessage) error {
	r.mu.Lock()
	r.out = append(r.out, bytes.Clone(m))
	r.mu.Unlock()
	return r.Stream.Write(m)
}

func (r *recorder) written() []json.RawMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]json.RawMessage(nil), r.out...)
}

// streamPair returns two line streams connected by io.Pipe both ways, and
// a's write end (closing it is a's clean hang-up).
func streamPair() (a, b Stream, aw io.Closer) {
	ar, bw := io.Pipe()
	br, apw := io.Pipe()
	return NewLineStream(ar, apw, closers{ar, apw}), NewLineStream(br, bw, closers{br, bw}), apw
}

// runPeer starts p and returns a func waiting for Run's result.
func runPeer(t *testing.T, ctx context.Context, p *Peer) func() error {
	t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- p.Run(ctx) }()
	return func() error {
		select {
		case err := <-errc:
			return err
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not return")
			return nil
		}
	}
}

// rawSide drives a peer from the other end of a pipe with raw lines.
type rawSide struct {
	t     *testing.T
	w     *io.PipeWriter
	r     *io.PipeReader
	lines chan string
}

func newRaw(t *testing.T, h Handler) (*rawSide, *Peer, func() error) {
	t.Helper()
	pr, rw := io.Pipe() // raw side writes rw, peer reads pr
	rr, pw := io.Pipe() // peer writes pw, raw side reads rr
	p := NewPeer(NewLineStream(pr, pw, closers{pr, pw}), h, WithLogger(quiet))
	raw := &rawSide{t: t, w: rw, r: rr, lines: make(chan string, 1024)}
	go func() {
		sc := bufio.NewScanner(rr)
		for sc.Scan() {
			raw.lines <- sc.Text()
		}
		close(raw.lines)
	}()
	wait := runPeer(t, context.Background(), p)
	t.Cleanup(func() { rw.Close(); rr.Close() })
	return raw, p, wait
}

func (r *rawSide) send(line string) {
	r.t.Helper()
	if _, err := io.WriteString(r.w, line+"\n"); err != nil {
		r.t.Fatalf("send: %v", err)
	}
}

func (r *rawSide) recv() string {
	r.t.Helper()
	select {
	case l, ok := <-r.lines:
		if !ok {
			r.t.Fatal("stream closed")
		}
		return l
	case <-time.After(5 * time.Second):
		r.t.Fatal("no message")
		return ""
	}
}

func echoHandler() Handler {
	return funcHandler{req: func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		switch method {
		case "echo":
			return params, nil
		case "nil":
			return nil, nil
		case "nilptr":
			var p *struct{}
			return p, nil
		case "raw":
			return json.RawMessage(`{"x": [1, 2], "s": "a\nb"}`), nil
		case "struct":
			return struct {
				A int    `json:"a"`
				B string `json:"b,omitempty"`
			}{A: 1}, nil
		case "fail":
			return nil, errors.New("boom")
		case "typed":
			return nil, &Error{Code: ResourceNotFound, Message: "Resource not found",
				Data: map[string]any{"kind": "session_busy", "session_id": "s1"}}
		case "wrapped":
			return nil, fmt.Errorf("loading: %w", NewError(InvalidParams, "Invalid argument: invalid session id format"))
		case "panic":
			panic("oops")
		case "badresult":
			return func() {}, nil
		}
		return nil, NewError(MethodNotFound, method)
	}}
}

func TestRawMessages(t *testing.T) {
	raw, _, _ := newRaw(t, echoHandler())
	tests := []struct{ in, want string }{
		{`{bad json`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`},
		{`[{"jsonrpc":"2.0","id":1,"method":"echo"}]`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request","data":"batches are not supported"}}`},
		{`[]`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request","data":"batches are not supported"}}`},
		{`42`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request","data":"message is not an object"}}`},
		{`"hello"`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request","data":"message is not an object"}}`},
		{`{"jsonrpc":"1.0","id":7,"method":"echo"}`, `{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"Invalid request","data":"jsonrpc must be \"2.0\""}}`},
		{`{"id":"v","method":"echo"}`, `{"jsonrpc":"2.0","id":"v","error":{"code":-32600,"message":"Invalid request","data":"jsonrpc must be \"2.0\""}}`},
		{`{"jsonrpc":2.0,"id":8,"method":"echo"}`, `{"jsonrpc":"2.0","id":8,"error":{"code":-32600,"message":"Invalid request","data":"jsonrpc must be \"2.0\""}}`},
		{`{"jsonrpc":"2.0","id":"a","method":5}`, `{"jsonrpc":"2.0","id":"a","error":{"code":-32600,"message":"Invalid request","data":"method must be a string"}}`},
		{`{"jsonrpc":"2.0","id":9,"method":null}`, `{"jsonrpc":"2.0","id":9,"error":{"code":-32600,"message":"Invalid request","data":"method must be a string"}}`},
		{`{"jsonrpc":"2.0","method":["x"]}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request","data":"method must be a string"}}`},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"echo"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request","data":"id must be a string, a number or null"}}`},
		{`{"jsonrpc":"2.0","id":true,"method":"echo"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request","data":"id must be a string, a number or null"}}`},
		{`{}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request","data":"message has no method and no result or error"}}`},
		// ids are echoed exactly, whatever their form.
		{`{"jsonrpc":"2.0","id":"req-1","method":"echo","params":{"a":1}}`, `{"jsonrpc":"2.0","id":"req-1","result":{"a":1}}`},
		{`{"jsonrpc":"2.0","id":"\u00e9\"x","method":"nil"}`, `{"jsonrpc":"2.0","id":"\u00e9\"x","result":null}`},
		{`{"jsonrpc":"2.0","id":0,"method":"nil"}`, `{"jsonrpc":"2.0","id":0,"result":null}`},
		{`{"jsonrpc":"2.0","id":12345678901234567890123,"method":"nil"}`, `{"jsonrpc":"2.0","id":12345678901234567890123,"result":null}`},
		{`{"jsonrpc":"2.0","id":1.5e3,"method":"nil"}`, `{"jsonrpc":"2.0","id":1.5e3,"result":null}`},
		{`{"jsonrpc":"2.0","id":-4,"method":"nil"}`, `{"jsonrpc":"2.0","id":-4,"result":null}`},
		{`{"jsonrpc":"2.0","id":null,"method":"nil"}`, `{"jsonrpc":"2.0","id":null,"result":null}`},
		{`  {"jsonrpc" : "2.0", "id" : 5 , "method":"echo"}  `, `{"jsonrpc":"2.0","id":5,"result":null}`},
		{`{"jsonrpc":"2.0","id":5,"method":"nilptr"}`, `{"jsonrpc":"2.0","id":5,"result":null}`},
		{`{"jsonrpc":"2.0","id":5,"method":"raw"}`, `{"jsonrpc":"2.0","id":5,"result":{"x":[1,2],"s":"a\nb"}}`},
		{`{"jsonrpc":"2.0","id":5,"method":"struct"}`, `{"jsonrpc":"2.0","id":5,"result":{"a":1}}`},
		{`{"jsonrpc":"2.0","id":6,"method":"fail"}`, `{"jsonrpc":"2.0","id":6,"error":{"code":-32603,"message":"Internal error","data":"boom"}}`},
		{`{"jsonrpc":"2.0","id":6,"method":"typed"}`, `{"jsonrpc":"2.0","id":6,"error":{"code":-32002,"message":"Resource not found","data":{"kind":"session_busy","session_id":"s1"}}}`},
		{`{"jsonrpc":"2.0","id":6,"method":"wrapped"}`, `{"jsonrpc":"2.0","id":6,"error":{"code":-32602,"message":"Invalid params","data":"Invalid argument: invalid session id format"}}`},
		{`{"jsonrpc":"2.0","id":6,"method":"nope"}`, `{"jsonrpc":"2.0","id":6,"error":{"code":-32601,"message":"Method not found","data":"nope"}}`},
		{`{"jsonrpc":"2.0","id":6,"method":"panic"}`, `{"jsonrpc":"2.0","id":6,"error":{"code":-32603,"message":"Internal error","data":"panic: oops"}}`},
		{`{"jsonrpc":"2.0","id":6,"method":"badresult"}`, `{"jsonrpc":"2.0","id":6,"error":{"code":-32603,"message":"Internal error","data":"marshal result: json: unsupported type: func()"}}`},
	}
	for _, tt := range tests {
		raw.send(tt.in)
		if got := raw.recv(); got != tt.want {
			t.Errorf("in  %s\ngot  %s\nwant %s", tt.in, got, tt.want)
		}
	}

	// Messages with no answer: notifications, blank lines, responses to
	// unknown ids (numeric, string, null). The next answer is the ping's.
	for _, in := range []string{
		`{"jsonrpc":"2.0","method":"note","params":{}}`,
		``, `   `,
		`{"jsonrpc":"2.0","id":99,"result":1}`,
		`{"jsonrpc":"2.0","id":"x","result":1}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`,
		`{"jsonrpc":"2.0","id":98,"error":{"code":-32000,"message":"Authentication required"}}`,
	} {
		raw.send(in)
	}
	raw.send(`{"jsonrpc":"2.0","id":"ping","method":"nil"}`)
	if got, want := raw.recv(), `{"jsonrpc":"2.0","id":"ping","result":null}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestPeersCallEachOther(t *testing.T) {
	sa, sb, hangup := streamPair()
	ra, rb := &recorder{Stream: sa}, &recorder{Stream: sb}
	var a, b *Peer
	handler := func(name string, self **Peer) Handler {
		return funcHandler{req: func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			switch method {
			case "whoami":
				var n int
				if err := json.Unmarshal(params, &n); err != nil {
					return nil, NewError(InvalidParams, err.Error())
				}
				return fmt.Sprintf("%s:%d", name, n), nil
			case "ask": // answer by asking the other side back
				var s string
				if err := (*self).Call(ctx, "whoami", 7, &s); err != nil {
					return nil, err
				}
				return name + " heard " + s, nil
			}
			return nil, NewError(MethodNotFound, method)
		}}
	}
	a = NewPeer(ra, handler("a", &a), WithLogger(quiet))
	b = NewPeer(rb, handler("b", &b), WithLogger(quiet))
	ctx := context.Background()
	waitA, waitB := runPeer(t, ctx, a), runPeer(t, ctx, b)

	// The first request of each side has id 0.
	var first string
	if err := a.Call(ctx, "whoami", 0, &first); err != nil || first != "b:0" {
		t.Fatalf("a->b: %q %v", first, err)
	}
	if err := b.Call(ctx, "whoami", 0, &first); err != nil || first != "a:0" {
		t.Fatalf("b->a: %q %v", first, err)
	}
	for _, r := range []*recorder{ra, rb} {
		var reqs []string
		for _, m := range r.written() {
			if bytes.Contains(m, []byte(`"method"`)) {
				reqs = append(reqs, string(m))
			}
		}
		if len(reqs) != 1 || reqs[0] != `{"jsonrpc":"2.0","id":0,"method":"whoami","params":0}` {
			t.Errorf("requests %s", reqs)
		}
	}

	const n = 50
	var wg sync.WaitGroup
	errs := make(chan error, 4*n)
	for i := 1; i <= n; i++ {
		for _, c := range []struct {
			from *Peer
			to   string
		}{{a, "b"}, {b, "a"}} {
			wg.Add(2)
			go func() {
				defer wg.Done()
				var s string
				if err := c.from.Call(ctx, "whoami", i, &s); err != nil {
					errs <- err
				} else if want := fmt.Sprintf("%s:%d", c.to, i); s != want {
					errs <- fmt.Errorf("got %q, want %q", s, want)
				}
			}()
			go func() {
				defer wg.Done()
				var s string
				if err := c.from.Call(ctx, "ask", nil, &s); err != nil {
					errs <- err
				} else if want := fmt.Sprintf("%s heard %s:7", c.to, map[string]string{"a": "b", "b": "a"}[c.to]); s != want {
					errs <- fmt.Errorf("got %q, want %q", s, want)
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	// One side hanging up ends both cleanly.
	hangup.Close()
	if err := waitA(); err != nil {
		t.Errorf("a.Run: %v", err)
	}
	if err := waitB(); err != nil {
		t.Errorf("b.Run: %v", err)
	}
	<-a.Done()
	<-b.Done()
	if err := a.Call(ctx, "whoami", 1, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Call after close: %v", err)
	}
	if err := a.Notify("x", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Notify after close: %v", err)
	}
}

func TestNotificationOrder(t *testing.T) {
	sa, sb, hangup := streamPair()
	var mu sync.Mutex
	var gotB, gotA []int
	b := NewPeer(sb, nil, WithLogger(quiet))
	b.h = funcHandler{
		note: func(ctx context.Context, method string, params json.RawMessage) {
			var i int
			json.Unmarshal(params, &i)
			mu.Lock()
			gotB = append(gotB, i)
			mu.Unlock()
		},
		req: func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			switch method {
			case "count": // every notification sent before this request was handled
				mu.Lock()
				defer mu.Unlock()
				return len(gotB), nil
			case "stream": // notifications then the result, in that order on the wire
				for i := range 100 {
					if err := b.Notify("progress", i); err != nil {
						return nil, err
					}
				}
				return "done", nil
			}
			return nil, NewError(MethodNotFound, method)
		},
	}
	a := NewPeer(sa, funcHandler{note: func(ctx context.Context, method string, params json.RawMessage) {
		var i int
		json.Unmarshal(params, &i)
		mu.Lock()
		gotA = append(gotA, i)
		mu.Unlock()
	}}, WithLogger(quiet))
	ctx := context.Background()
	waitA, waitB := runPeer(t, ctx, a), runPeer(t, ctx, b)

	for i := range 200 {
		if err := a.Notify("n", i); err != nil {
			t.Fatal(err)
		}
	}
	var count int
	if err := a.Call(ctx, "count", nil, &count); err != nil || count != 200 {
		t.Fatalf("count %d %v", count, err)
	}
	var s string
	if err := a.Call(ctx, "stream", nil, &s); err != nil || s != "done" {
		t.Fatalf("stream %q %v", s, err)
	}
	mu.Lock()
	if len(gotA) != 100 {
		t.Errorf("a saw %d notifications before the result, want 100", len(gotA))
	}
	for i, v := range gotB {
		if v != i {
			t.Fatalf("b: notification %d is %d", i, v)
		}
	}
	for i, v := range gotA {
		if v != i {
			t.Fatalf("a: notification %d is %d", i, v)
		}
	}
	mu.Unlock()
	hangup.Close()
	if err := waitA(); err != nil {
		t.Error(err)
	}
	if err := waitB(); err != nil {
		t.Error(err)
	}
}

func TestConcurrentRequests(t *testing.T) {
	release := make(chan struct{})
	slowStarted := make(chan struct{})
	h := funcHandler{req: func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		if method == "slow" {
			close(slowStarted)
			select {
			case <-release:
				return "slow", nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return "fast", nil
	}}
	raw, _, _ := newRaw(t, h)
	raw.send(`{"jsonrpc":"2.0","id":1,"method":"slow"}`)
	<-slowStarted
	raw.send(`{"jsonrpc":"2.0","id":2,"method":"fast"}`)
	if got := raw.recv(); got != `{"jsonrpc":"2.0","id":2,"result":"fast"}` {
		t.Fatalf("got %s", got)
	}
	close(release)
	if got := raw.recv(); got != `{"jsonrpc":"2.0","id":1,"result":"slow"}` {
		t.Fatalf("got %s", got)
	}
}

func TestCallErrorsAndCancel(t *testing.T) {
	raw, p, _ := newRaw(t, nil)
	ctx := context.Background()

	// An error response becomes *Error with its data.
	errc := make(chan error, 1)
	go func() { errc <- p.Call(ctx, "session/load", map[string]string{"sessionId": "x"}, nil) }()
	if got := raw.recv(); got != `{"jsonrpc":"2.0","id":0,"method":"session/load","params":{"sessionId":"x"}}` {
		t.Fatalf("request %s", got)
	}
	raw.send(`{"jsonrpc":"2.0","id":0,"error":{"code":-32002,"message":"Resource not found","data":{"kind":"x"}}}`)
	var rpcErr *Error
	if err := <-errc; !errors.As(err, &rpcErr) || rpcErr.Code != ResourceNotFound || rpcErr.Data.(map[string]any)["kind"] != "x" {
		t.Fatalf("got %#v", err)
	}

	// Cancelling ctx abandons the wait; a late answer is ignored.
	cctx, cancel := context.WithCancel(ctx)
	go func() { errc <- p.Call(cctx, "slow", nil, nil) }()
	if got := raw.recv(); got != `{"jsonrpc":"2.0","id":1,"method":"slow"}` {
		t.Fatalf("request %s", got)
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
	raw.send(`{"jsonrpc":"2.0","id":1,"result":"late"}`)

	// The next call gets its own answer, decoded.
	go func() {
		var out struct{ V int }
		err := p.Call(ctx, "next", json.RawMessage(`[1]`), &out)
		if err == nil && out.V != 3 {
			err = fmt.Errorf("decoded %+v", out)
		}
		errc <- err
	}()
	if got := raw.recv(); got != `{"jsonrpc":"2.0","id":2,"method":"next","params":[1]}` {
		t.Fatalf("request %s", got)
	}
	raw.send(`{"jsonrpc":"2.0","id":2,"result":{"V":3}}`)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}

	// A malformed response fails the call instead of hanging it.
	go func() { errc <- p.Call(ctx, "m", nil, nil) }()
	raw.recv()
	raw.send(`{"jsonrpc":"1.0","id":3,"result":1}`)
	if err := <-errc; !errors.As(err, &rpcErr) || rpcErr.Code != InvalidRequest {
		t.Fatalf("got %v", err)
	}

	// No handler: requests are Method not found.
	raw.send(`{"jsonrpc":"2.0","id":"q","method":"anything"}`)
	if got := raw.recv(); got != `{"jsonrpc":"2.0","id":"q","error":{"code":-32601,"message":"Method not found","data":"anything"}}` {
		t.Fatalf("got %s", got)
	}
}

func TestRunEOFFailsPendingAndCancelsHandlers(t *testing.T) {
	started := make(chan struct{})
	handlerErr := make(chan error, 1)
	h := funcHandler{req: func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		close(started)
		<-ctx.Done()
		handlerErr <- ctx.Err()
		return nil, ctx.Err()
	}}
	raw, p, wait := newRaw(t, h)
	raw.send(`{"jsonrpc":"2.0","id":1,"method":"block"}`)
	<-started
	callErr := make(chan error, 1)
	go func() { callErr <- p.Call(context.Background(), "pending", nil, nil) }()
	raw.recv() // the pending request

	raw.w.Close() // EOF
	if err := wait(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	select {
	case <-p.Done():
	default:
		t.Fatal("Done not closed")
	}
	if err := <-handlerErr; !errors.Is(err, context.Canceled) {
		t.Errorf("handler ctx: %v", err)
	}
	if err := <-callErr; !errors.Is(err, ErrClosed) {
		t.Errorf("pending call: %v", err)
	}
	// The cancelled handler's answer was still written before the close.
	if got := raw.recv(); !strings.Contains(got, `"id":1,"error":{"code":-32603`) {
		t.Errorf("answer %s", got)
	}
}

func TestRunContextCancel(t *testing.T) {
	sa, _, _ := streamPair()
	p := NewPeer(sa, nil, WithLogger(quiet))
	ctx, cancel := context.WithCancel(context.Background())
	wait := runPeer(t, ctx, p)
	callErr := make(chan error, 1)
	go func() { callErr <- p.Call(context.Background(), "x", nil, nil) }()
	time.Sleep(10 * time.Millisecond)
	cancel()
	if err := wait(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}
	if err := <-callErr; err == nil {
		t.Fatalf("call: %v", err)
	}
	if err := p.Run(context.Background()); err == nil {
		t.Fatal("second Run succeeded")
	}
}

// fill yields prefix, n filler bytes, then suffix.
type fill struct {
	prefix, suffix string
	n              int
}

func (f *fill) Read(b []byte) (int, error) {
	k := 0
	for k < len(b) {
		switch {
		case f.prefix != "":
			c := copy(b[k:], f.prefix)
			f.prefix = f.prefix[c:]
			k += c
		case f.n > 0:
			c := min(f.n, len(b)-k)
			for i := range c {
				b[k+i] = 'x'
			}
			f.n -= c
			k += c
		case f.suffix != "":
			c := copy(b[k:], f.suffix)
			f.suffix = f.suffix[c:]
			k += c
		default:
			if k == 0 {
				return 0, io.EOF
			}
			return k, nil
		}
	}
	return k, nil
}

func TestLineLimit(t *testing.T) {
	// A line of exactly MaxLineSize is accepted.
	s := NewLineStream(&fill{prefix: `"`, n: MaxLineSize - 2, suffix: "\"\r\n{}\n"}, io.Discard, nil)
	msg, err := s.Read()
	if err != nil || len(msg) != MaxLineSize {
		t.Fatalf("read %d bytes: %v", len(msg), err)
	}
	if msg, err := s.Read(); err != nil || string(msg) != "{}" {
		t.Fatalf("next: %s %v", msg, err)
	}
	msg = nil

	// One byte more is an error, and Run returns it; so is a longer line
	// the scanner's buffer cannot hold.
	for _, n := range []int{MaxLineSize - 1, MaxLineSize + 100} {
		s = NewLineStream(&fill{prefix: `"`, n: n, suffix: "\"\n"}, io.Discard, nil)
		err = NewPeer(s, nil, WithLogger(quiet)).Run(context.Background())
		if !errors.Is(err, ErrLineTooLong) || !errors.Is(err, bufio.ErrTooLong) {
			t.Fatalf("Run with a %d-byte line: %v", n+2, err)
		}
	}
}

func TestLineStream(t *testing.T) {
	in := "\n  \n{\"a\":1}\r\n\n[2]\n{\"last\":true}"
	var out bytes.Buffer
	s := NewLineStream(strings.NewReader(in), &out, nil)
	var got []string
	for {
		m, err := s.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(m))
	}
	if strings.Join(got, "|") != `{"a":1}|[2]|{"last":true}` {
		t.Errorf("read %q", got)
	}
	if err := s.Write(json.RawMessage("{\n  \"a\": \"x\\ny\"\n}")); err != nil {
		t.Fatal(err)
	}
	if out.String() != "{\"a\":\"x\\ny\"}\n" {
		t.Errorf("wrote %q", out.String())
	}

	// Concurrent writes never interleave.
	var lw lockedBuffer
	s = NewLineStream(strings.NewReader(""), &lw, nil)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			for j := range 50 {
				s.Write(json.RawMessage(fmt.Sprintf(`{"i":%d,"j":%d,"pad":%q}`, i, j, strings.Repeat("p", 1000))))
			}
		})
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(lw.String(), "\n"), "\n")
	if len(lines) != 1000 {
		t.Fatalf("%d lines", len(lines))
	}
	for _, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Fatalf("interleaved line %.80s", l)
		}
	}
}

// lockedBuffer does one small Write at a time, the way a pipe may split.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	n0 := len(p)
	for len(p) > 0 {
		n := min(len(p), 100)
		l.mu.Lock()
		l.b.Write(p[:n])
		l.mu.Unlock()
		p = p[n:]
	}
	return n0, nil
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestError(t *testing.T) {
	for code, msg := range map[int]string{ParseError: "Parse error", InvalidRequest: "Invalid request",
		MethodNotFound: "Method not found", InvalidParams: "Invalid params", Internal: "Internal error",
		ResourceNotFound: "Resource not found", AuthRequired: "Authentication required"} {
		if e := NewError(code, nil); e.Message != msg {
			t.Errorf("%d: %q", code, e.Message)
		}
	}
	e := NewError(ResourceNotFound, "session not found: abc123")
	b, _ := json.Marshal(e)
	if string(b) != `{"code":-32002,"message":"Resource not found","data":"session not found: abc123"}` {
		t.Errorf("%s", b)
	}
	if e.Error() != "jsonrpc: Resource not found (-32002): session not found: abc123" {
		t.Errorf("%s", e.Error())
	}
	b, _ = json.Marshal(NewError(MethodNotFound, nil))
	if string(b) != `{"code":-32601,"message":"Method not found"}` {
		t.Errorf("%s", b)
	}
}

// TestInOrderHandshake: a request marked in-order is finished before the
// requests pipelined behind it are handled.
func TestInOrderHandshake(t *testing.T) {
	var ready atomic.Bool
	h := funcHandler{req: func(ctx context.Context, method string, _ json.RawMessage) (any, error) {
		if method == "init" {
			time.Sleep(50 * time.Millisecond)
			ready.Store(true)
			return "ok", nil
		}
		return ready.Load(), nil
	}}
	pr, rw := io.Pipe()
	rr, pw := io.Pipe()
	p := NewPeer(NewLineStream(pr, pw, closers{pr, pw}), h, WithLogger(quiet), WithInOrder(func(m string) bool { return m == "init" }))
	runPeer(t, context.Background(), p)
	t.Cleanup(func() { rw.Close(); rr.Close() })
	go io.WriteString(rw, `{"jsonrpc":"2.0","id":1,"method":"init"}`+"\n"+`{"jsonrpc":"2.0","id":2,"method":"after"}`+"\n")
	sc := bufio.NewScanner(rr)
	for range 2 {
		if !sc.Scan() {
			t.Fatal("no reply")
		}
		if strings.Contains(sc.Text(), `"id":2`) && !strings.Contains(sc.Text(), `"result":true`) {
			t.Fatalf("request after the handshake ran before it finished: %s", sc.Text())
		}
	}
}
