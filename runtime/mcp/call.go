package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openheim/openheim/runtime/tools"
)

// call calls a tool by its raw name. The result is always usable as a tool
// result; the error is non-nil when the server gave no answer (it could not
// be reached, the connection broke, the call timed out or was cancelled),
// and the result then carries the same message with IsError set.
//
// A call on a server whose connection is known to be gone reconnects first.
// A call that fails because the connection broke drops the session, so the
// next call reconnects; it is retried here, once, only when the request
// provably was not processed: the connection was already closed, the dial
// failed, the stdin pipe was broken, or an HTTP server refused it with an
// error status (an unknown session: 404, or 400 from TypeScript servers).
func (s *server) call(ctx context.Context, tool string, args json.RawMessage) (tools.Result, error) {
	if !allowed(s.cfg.EnabledTools, s.cfg.DisabledTools, tool) {
		return fail(fmt.Errorf("tool %q of MCP server %q is disabled by its enabled_tools/disabled_tools", tool, s.name))
	}
	arguments, err := callArguments(args)
	if err != nil {
		return fail(err)
	}
	for attempt := 0; ; attempt++ {
		sess, err := s.session(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return fail(fmt.Errorf("MCP tool %q: %w", tool, ctx.Err()))
			}
			return fail(fmt.Errorf("MCP server %q is unavailable: %w", s.name, err))
		}
		res, err := s.callOnce(ctx, sess, tool, arguments)
		if err == nil {
			return res, nil
		}
		var conn connError
		if !errors.As(err, &conn) {
			return fail(err)
		}
		s.drop(sess, conn.err)
		if attempt == 0 && conn.notSent {
			continue
		}
		return fail(fmt.Errorf("MCP server %q: the connection broke during the call (%s); the next call reconnects",
			s.name, s.scrub.Replace(conn.err.Error())))
	}
}

// connError marks a failure of the connection rather than of the call;
// notSent when the request provably never reached the server.
type connError struct {
	err     error
	notSent bool
}

func (e connError) Error() string { return e.err.Error() }

// callOnce makes one tools/call on sess under the tool timeout. A protocol
// error (an unknown tool on a Go server) is an error result, not an error.
func (s *server) callOnce(ctx context.Context, sess *session, tool string, args json.RawMessage) (tools.Result, error) {
	timeout := s.toolTimeout()
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if !s.m.callStart() {
		return tools.Result{}, errClosed
	}
	defer s.m.callEnd()
	defer context.AfterFunc(s.m.base, cancel)() // Close cancels calls in flight
	res, err := sess.cs.CallTool(cctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err == nil {
		return toResult(res), nil
	}
	var werr *jsonrpc.Error
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	rejected := errors.Is(err, errRejected)
	switch {
	case errors.As(err, &werr) && !rejected:
		// The server answered the request with a JSON-RPC error.
		return tools.Result{Content: fmt.Sprintf("MCP error %d: %s", werr.Code, werr.Message), IsError: true}, nil
	case s.m.base.Err() != nil:
		return tools.Result{}, errClosed
	case ctx.Err() != nil:
		return tools.Result{}, fmt.Errorf("MCP tool %q: %w", tool, ctx.Err())
	case cctx.Err() != nil:
		return tools.Result{}, fmt.Errorf("MCP tool %q timed out after %s (tool_timeout_secs)", tool, timeout)
	case errors.As(err, &syn), errors.As(err, &typ):
		return tools.Result{}, fmt.Errorf("MCP tool %q: malformed result: %v", tool, err)
	case rejected && werr != nil && werr.Code != errRejected.Code:
		// An HTTP error status with a JSON-RPC error body: the server
		// refused the request itself, typically because it no longer knows
		// the session (TypeScript servers answer 400 or 404 so after a
		// restart). It was not processed: reconnect and retry.
		return tools.Result{}, connError{err: err, notSent: true}
	}
	return tools.Result{}, connError{err: err, notSent: notSent(err)}
}

// errRejected matches (by code, as the SDK's errors compare) the SDK's
// "rejected by transport": an HTTP request that failed or got an error
// status, which the SDK does not treat as breaking the connection.
var errRejected = &jsonrpc.Error{Code: -32005}

// notSent reports errors that prove the request never reached the server.
func notSent(err error) bool {
	var op *net.OpError
	return errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, mcp.ErrSessionMissing) ||
		errors.Is(err, syscall.EPIPE) || (errors.As(err, &op) && op.Op == "dial")
}

// callArguments checks that args is a JSON object; empty or null becomes {}
// (TypeScript servers reject null arguments). The bytes are sent as they
// are, so large integers keep their precision.
func callArguments(args json.RawMessage) (json.RawMessage, error) {
	b := bytes.TrimSpace(args)
	if len(b) == 0 || bytes.Equal(b, []byte("null")) {
		return json.RawMessage("{}"), nil
	}
	if b[0] != '{' || !json.Valid(b) {
		return nil, errors.New("tool arguments must be a JSON object")
	}
	return json.RawMessage(b), nil
}

func fail(err error) (tools.Result, error) {
	return tools.Result{Content: err.Error(), IsError: true}, err
}
