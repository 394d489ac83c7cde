// Package jsonrpc is a JSON-RPC 2.0 peer over any message stream: ACP over
// stdio (NDJSON), inside WebSocket envelopes, and bare on a WebSocket.
//
// Both sides may send requests; each numbers its own from 0. A message with
// a method and an id is a request, a method without an id a notification,
// and a message without a method a response. Batches are rejected.
package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/openheim/openheim/runtime/redact"
)

// Handler serves the other side's requests and notifications.
//
// Request runs in its own goroutine, concurrently with other requests; its
// context is cancelled when the peer stops. A nil result is sent as
// `"result":null`; a json.RawMessage result is sent as is.
//
// Notification runs in the read loop, in the order notifications arrive,
// so it must not block for long (hand slow work to a goroutine).
type Handler interface {
	Request(ctx context.Context, method string, params json.RawMessage) (any, error)
	Notification(ctx context.Context, method string, params json.RawMessage)
}

// ErrClosed is returned by Call and Notify once the peer has stopped; a
// Call pending when the peer stops fails with an error wrapping it.
var ErrClosed = errors.New("jsonrpc: connection closed")

// Option configures a Peer.
type Option func(*Peer)

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return func(p *Peer) {
		if l != nil {
			p.log = l
		}
	}
}

// WithInOrder makes the read loop handle requests for which inOrder is
// true itself, before reading the next message: a handshake such as ACP's
// initialize must be done before requests pipelined behind it are seen.
// Such handlers must be quick.
func WithInOrder(inOrder func(method string) bool) Option {
	return func(p *Peer) { p.inOrder = inOrder }
}

// WithRedactor masks r's secrets in every error response the peer sends
// (an agent's turn that failed quotes its provider's error).
func WithRedactor(r *redact.Redactor) Option {
	return func(p *Peer) { p.red = r }
}

// Peer is one end of a JSON-RPC connection.
type Peer struct {
	s       Stream
	h       Handler
	log     *slog.Logger
	inOrder func(method string) bool
	red     *redact.Redactor
	bad     func(raw json.RawMessage, err error) // WithInvalid

	nextID  atomic.Int64
	started atomic.Bool
	done    chan struct{}

	mu       sync.Mutex
	closed   bool
	closeErr error
	pending  map[int64]chan reply
	wg       sync.WaitGroup // dispatches in progress (handlers)
}

type reply struct {
	result json.RawMessage
	err    error
}

// NewPeer returns a peer on s serving h (nil: every request is answered
// Method not found and notifications are dropped). Call Run to start it.
func NewPeer(s Stream, h Handler, opts ...Option) *Peer {
	p := &Peer{s: s, h: h, log: slog.Default(), done: make(chan struct{}), pending: map[int64]chan reply{}}
	for _, o := range opts {
		o(p)
	}
	return p
}

// Done is closed when Run has returned.
func (p *Peer) Done() <-chan struct{} { return p.done }

// Run reads and dispatches messages until the stream ends, and returns nil
// on a clean EOF, the read error otherwise, or ctx's error when ctx is
// cancelled first (the read is then interrupted, see ReadInterrupter, or
// else the stream is closed to unblock it). On return every in-flight
// request's context has been cancelled, every pending Call has failed,
// and every handler has returned (its answer written); Run then closes the
// stream. Run may be called once.
func (p *Peer) Run(ctx context.Context) error {
	if !p.started.CompareAndSwap(false, true) {
		return errors.New("jsonrpc: Run called twice")
	}
	hctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var err error
	if ri, ok := p.s.(ReadInterrupter); ok {
		err = p.readInline(ctx, hctx, ri)
	} else {
		err = p.readAside(ctx, hctx)
	}
	cancel()
	p.shutdown(err)
	p.wg.Wait()
	p.s.Close()
	close(p.done)
	return err
}

func (p *Peer) shutdown(cause error) {
	p.mu.Lock()
	p.closed = true
	p.closeErr = ErrClosed
	if cause != nil {
		p.closeErr = fmt.Errorf("%w: %w", ErrClosed, cause)
	}
	pending := p.pending
	p.pending = map[int64]chan reply{}
	p.mu.Unlock()
	for _, ch := range pending {
		ch <- reply{err: p.closeErr}
	}
}

// enter registers a dispatch unless the peer has stopped.
func (p *Peer) enter() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.wg.Add(1)
	return true
}

func (p *Peer) readLoop(ctx context.Context) error {
	for {
		msg, err := p.s.Read()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if !p.enter() {
			return nil
		}
		if !p.dispatch(ctx, msg) {
			p.wg.Done()
		}
	}
}

// dispatch handles one message. It reports whether it handed the dispatch
// (and its wg count) to a request goroutine.
func (p *Peer) dispatch(ctx context.Context, raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	if !json.Valid(raw) {
		p.invalid(raw, nil, NewError(ParseError, nil))
		return false
	}
	switch raw[0] {
	case '[':
		p.invalid(raw, nil, NewError(InvalidRequest, "batches are not supported"))
		return false
	case '{':
	default:
		p.invalid(raw, nil, NewError(InvalidRequest, "message is not an object"))
		return false
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		p.invalid(raw, nil, NewError(InvalidRequest, err.Error()))
		return false
	}
	id, hasID := m["id"]
	if hasID && !validID(id) {
		p.invalid(raw, nil, NewError(InvalidRequest, "id must be a string, a number or null"))
		return false
	}
	methodRaw, hasMethod := m["method"]
	if !hasMethod {
		p.handleResponse(m)
		return false
	}
	if !validVersion(m["jsonrpc"]) {
		p.invalid(raw, id, NewError(InvalidRequest, `jsonrpc must be "2.0"`))
		return false
	}
	var method string
	if len(methodRaw) == 0 || methodRaw[0] != '"' || json.Unmarshal(methodRaw, &method) != nil {
		p.invalid(raw, id, NewError(InvalidRequest, "method must be a string"))
		return false
	}
	params := m["params"]
	if !hasID {
		p.notify(ctx, method, params)
		return false
	}
	handle := func() {
		defer p.wg.Done()
		res, err := p.request(ctx, method, params)
		p.respond(id, method, res, err)
	}
	if p.inOrder != nil && p.inOrder(method) {
		handle()
	} else {
		go handle()
	}
	return true
}

func (p *Peer) notify(ctx context.Context, method string, params json.RawMessage) {
	if p.h == nil {
		return
	}
	defer func() {
		if r := recover(); r != nil {
			p.log.Error("jsonrpc: notification handler panicked", "method", method, "panic", r, "stack", string(debug.Stack()))
		}
	}()
	p.h.Notification(ctx, method, params)
}

func (p *Peer) request(ctx context.Context, method string, params json.RawMessage) (res any, err error) {
	if p.h == nil {
		return nil, NewError(MethodNotFound, method)
	}
	defer func() {
		if r := recover(); r != nil {
			p.log.Error("jsonrpc: request handler panicked", "method", method, "panic", r, "stack", string(debug.Stack()))
			res, err = nil, NewError(Internal, fmt.Sprintf("panic: %v", r))
		}
	}()
	return p.h.Request(ctx, method, params)
}

type resultMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
}

type errorMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   *Error          `json:"error"`
}

type requestMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      *int64          `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

var null = json.RawMessage("null")

func (p *Peer) respond(id json.RawMessage, method string, res any, err error) {
	if err == nil {
		var result json.RawMessage
		switch r := res.(type) {
		case nil:
			result = null
		case json.RawMessage:
			result = r
			if len(r) == 0 {
				result = null
			}
		default:
			result, err = json.Marshal(res)
			if err != nil {
				err = NewError(Internal, "marshal result: "+err.Error())
			}
		}
		if err == nil {
			b, merr := json.Marshal(resultMsg{"2.0", id, result})
			if merr == nil {
				p.write(b, method)
				return
			}
			err = NewError(Internal, "marshal result: "+merr.Error())
		}
	}
	var rpcErr *Error
	if !errors.As(err, &rpcErr) || rpcErr == nil {
		rpcErr = NewError(Internal, err.Error())
	}
	p.sendError(id, rpcErr)
}

func (p *Peer) sendError(id json.RawMessage, e *Error) {
	if len(id) == 0 {
		id = null
	}
	b, err := json.Marshal(errorMsg{"2.0", id, e})
	if err != nil { // data not marshalable: keep code and message
		b, _ = json.Marshal(errorMsg{"2.0", id, &Error{Code: e.Code, Message: e.Message, Data: err.Error()}})
	}
	p.write(p.red.Bytes(b), "")
}

func (p *Peer) write(b []byte, method string) {
	if err := p.s.Write(b); err != nil {
		p.log.Debug("jsonrpc: write failed", "method", method, "err", err)
	}
}

func (p *Peer) handleResponse(m map[string]json.RawMessage) {
	idRaw, hasID := m["id"]
	resRaw, hasResult := m["result"]
	errRaw, hasError := m["error"]
	if !hasID && !hasResult && !hasError {
		// Neither a request nor a response; replying with a null id cannot be
		// mistaken for the answer to anything.
		p.invalid(nil, nil, NewError(InvalidRequest, "message has no method and no result or error"))
		return
	}
	var r reply
	switch {
	case !validVersion(m["jsonrpc"]):
		r.err = NewError(InvalidRequest, `invalid response: jsonrpc must be "2.0"`)
	case hasError && string(errRaw) != "null":
		var e Error
		if err := json.Unmarshal(errRaw, &e); err != nil {
			r.err = NewError(InvalidRequest, "invalid response: malformed error: "+err.Error())
		} else {
			r.err = &e
		}
	case hasResult:
		r.result = resRaw
	default:
		r.err = NewError(InvalidRequest, "invalid response: no result or error")
	}
	if !hasID || string(idRaw) == "null" {
		if r.err != nil {
			p.log.Warn("jsonrpc: the other side reported an error", "err", r.err)
		} else {
			p.log.Debug("jsonrpc: response without id ignored")
		}
		return
	}
	id, err := strconv.ParseInt(string(idRaw), 10, 64)
	p.mu.Lock()
	ch, ok := p.pending[id]
	if ok && err == nil {
		delete(p.pending, id)
	}
	p.mu.Unlock()
	if err != nil || !ok {
		p.log.Debug("jsonrpc: response to an unknown id ignored", "id", string(idRaw))
		if p.bad != nil {
			p.bad(nil, fmt.Errorf("a response to id %s, which no request of ours has", idRaw))
		}
		return
	}
	ch <- r
}

func marshalParams(params any) (json.RawMessage, error) {
	switch v := params.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return v, nil
	}
	return json.Marshal(params)
}

// Call sends a request and waits for its response, decoding the result
// into result (unless result is nil). An error response is returned as
// *Error. Cancelling ctx abandons the wait (the response, if it comes, is
// ignored). nil params are omitted.
func (p *Peer) Call(ctx context.Context, method string, params, result any) error {
	ps, err := marshalParams(params)
	if err != nil {
		return fmt.Errorf("jsonrpc: %s: marshal params: %w", method, err)
	}
	id := p.nextID.Add(1) - 1
	b, err := json.Marshal(requestMsg{JSONRPC: "2.0", ID: &id, Method: method, Params: ps})
	if err != nil {
		return fmt.Errorf("jsonrpc: %s: marshal params: %w", method, err)
	}
	ch := make(chan reply, 1)
	p.mu.Lock()
	if p.closed {
		err := p.closeErr
		p.mu.Unlock()
		return err
	}
	p.pending[id] = ch
	p.mu.Unlock()
	if err := p.s.Write(b); err != nil {
		p.forget(id)
		return fmt.Errorf("jsonrpc: %s: %w", method, err)
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return r.err
		}
		if result != nil {
			if err := json.Unmarshal(r.result, result); err != nil {
				return fmt.Errorf("jsonrpc: %s: decode result: %w", method, err)
			}
		}
		return nil
	case <-ctx.Done():
		p.forget(id)
		return ctx.Err()
	}
}

func (p *Peer) forget(id int64) {
	p.mu.Lock()
	delete(p.pending, id)
	p.mu.Unlock()
}

// Notify sends a notification. nil params are omitted. It works until Run
// has returned (handlers may still notify while Run waits for them).
func (p *Peer) Notify(method string, params any) error {
	ps, err := marshalParams(params)
	if err != nil {
		return fmt.Errorf("jsonrpc: %s: marshal params: %w", method, err)
	}
	// Notifications are the hot path (every streamed chunk): the envelope
	// is appended around the params rather than re-encoded, which would
	// validate and copy them a second time.
	var b []byte
	if plainName(method) {
		b = make([]byte, 0, len(ps)+len(method)+40)
		b = append(append(append(b, `{"jsonrpc":"2.0","method":"`...), method...), '"')
		if ps != nil {
			b = append(append(b, `,"params":`...), ps...)
		}
		b = append(b, '}')
	} else if b, err = json.Marshal(requestMsg{JSONRPC: "2.0", Method: method, Params: ps}); err != nil {
		return fmt.Errorf("jsonrpc: %s: marshal params: %w", method, err)
	}
	select {
	case <-p.done:
		return ErrClosed
	default:
	}
	return p.s.Write(b)
}

// plainName reports whether a method name needs no JSON escaping.
func plainName(m string) bool {
	for i := 0; i < len(m); i++ {
		c := m[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
