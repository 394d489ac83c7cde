// Package mcpserver serves openheim's built-in tools as an MCP server, over
// stdio or Streamable HTTP, on modelcontextprotocol/go-sdk.
//
// Builtins assembles what `openheim mcp serve` offers from the config: the
// tool registry (tools.Builtins: every path confined to the work directory
// through a kernel-enforced confine.Root, the shell only when allowed) and
// the permission rules' verdict on each call. The server itself only
// translates between MCP and the tools.Tool interface, so a client of
// `mcp serve` meets exactly the boundary the built-in agent does.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openheim/openheim/runtime/tools"
)

// Options configures the server.
type Options struct {
	// Tools are the tools to serve, every one of them. Nil serves none.
	Tools *tools.Registry
	// Permit decides whether a call may run, with the arguments it would
	// run with; a refusal answers the call with an error result
	// "permission denied: <why>". Nil allows every call.
	Permit func(ctx context.Context, tool string, args json.RawMessage) (allowed bool, why string)
	// Version is the server version announced at initialize.
	Version string
	// Log receives the server's diagnostics; nil discards them. Nothing is
	// ever written to the protocol stream but protocol messages.
	Log *slog.Logger
}

// Name is the server name announced at initialize.
const Name = "openheim"

func (o Options) logger() *slog.Logger {
	if o.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Log
}

// New returns an MCP server exposing every tool of opts.Tools.
func New(opts Options) *mcp.Server {
	log := opts.logger()
	s := mcp.NewServer(&mcp.Implementation{Name: Name, Version: opts.Version}, &mcp.ServerOptions{
		Logger: log,
		// The tool set is fixed for the server's life: no list_changed
		// notifications. Logging (logging/setLevel) is the SDK default and
		// is kept for clients that set a level before calling tools.
		Capabilities: &mcp.ServerCapabilities{
			Logging: &mcp.LoggingCapabilities{},
			Tools:   &mcp.ToolCapabilities{},
		},
	})
	if opts.Tools == nil {
		return s
	}
	for _, t := range opts.Tools.Tools() {
		mt, err := toolOf(t)
		if err != nil {
			log.Warn("mcp serve: tool not served", "tool", t.Spec().Name, "err", err)
			continue
		}
		s.AddTool(mt, handler(opts, log, t))
	}
	return s
}

// ServeStdio serves opts over newline-delimited JSON-RPC on in and out
// until in reaches EOF (nil) or ctx ends (nil too: the caller knows why it
// cancelled). in and out are not closed.
func ServeStdio(ctx context.Context, opts Options, in io.Reader, out io.Writer) error {
	t := &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}}
	err := New(opts).Run(ctx, t)
	if ctx.Err() != nil || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// Handler returns a Streamable HTTP handler serving opts, to mount at /mcp.
// One server backs every session. Requests reaching a loopback listener
// with a non-loopback Host header are refused (DNS rebinding protection).
// Sessions are stateful (Mcp-Session-Id): a call is cancelled by the
// client's notifications/cancelled or by the end of its session (DELETE),
// not by a dropped connection, as the 2025-11-25 transport spec requires.
// A session idle for SessionIdle (a host that went away without DELETE) is
// closed, so a long-running server does not keep them forever.
func Handler(opts Options) http.Handler {
	s := New(opts)
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Logger: opts.logger(), SessionTimeout: SessionIdle})
}

// SessionIdle is how long an HTTP session may go without a request.
const SessionIdle = 30 * time.Minute

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
