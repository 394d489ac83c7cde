package commands

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/openheim/openheim/protocol/server"
	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/mcpserver"
	"github.com/urfave/cli/v3"
)

// MCPServeOptions is everything `openheim mcp serve` needs.
type MCPServeOptions struct {
	IO             *IOStreams
	Config         func() (*config.Config, error)
	Home           func() string // where the default token is kept
	Version        string
	HTTP           string // host:port; "" serves stdio
	Token          string
	InsecureNoAuth bool
	DenyAsk        bool
}

func newCmdMCPServe(f *Factory, runF func(context.Context, *MCPServeOptions) error) *cli.Command {
	opts := &MCPServeOptions{IO: f.IOStreams, Config: f.Config, Home: f.Home, Version: f.Version}
	return &cli.Command{
		Name:  "serve",
		Usage: "serve openheim's built-in tools to an MCP host (stdio, or Streamable HTTP)",
		Description: `Offers the built-in tools (read_file, write_file, edit_file, list_dir, search,
web_fetch, and execute_command only when allow_shell is on) to any MCP host:
Claude Code, Codex, an IDE. They run in work_dir with the same sandbox as in a
turn, and the [permissions] rules apply: denied tools are refused; tools the
rules would ask about run (the host asks its user), unless --deny-ask.

Over stdio by default (stdout carries only the protocol). --http ADDR serves
Streamable HTTP at http://ADDR/mcp instead, with the access rules of
'openheim serve': every request needs "Authorization: Bearer <token>", the
token given (--token or OPENHEIM_TOKEN) or else the one kept in
$OPENHEIM_HOME/serve_token (made on first use); --insecure-no-auth turns
that off on a loopback address only.

Examples:
  openheim mcp serve
  claude mcp add openheim -- openheim mcp serve
  openheim mcp serve --http 127.0.0.1:8765
  claude mcp add --transport http openheim http://127.0.0.1:8765/mcp \
    --header "Authorization: Bearer $(cat ~/.openheim/serve_token)"`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "http", Usage: "serve Streamable HTTP on `ADDR` (host:port) at /mcp instead of stdio"},
			&cli.StringFlag{Name: "token", Usage: "with --http: require this bearer token (default $OPENHEIM_TOKEN, else the one kept in $OPENHEIM_HOME/serve_token)", Sources: cli.EnvVars("OPENHEIM_TOKEN")},
			&cli.BoolFlag{Name: "insecure-no-auth", Usage: "with --http: require no token (loopback addresses only)"},
			&cli.BoolFlag{Name: "deny-ask", Usage: "refuse the tools the permission rules would ask about"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if err := noArgs(cmd); err != nil {
				return err
			}
			opts.HTTP, opts.Token, opts.InsecureNoAuth = cmd.String("http"), cmd.String("token"), cmd.Bool("insecure-no-auth")
			opts.DenyAsk = cmd.Bool("deny-ask")
			return run(ctx, opts, runF, mcpServeRun)
		},
	}
}

// mcpServeRun serves the runtime's built-in tools and permission verdicts
// (mcpserver.Builtins) over stdio or, with HTTP, Streamable HTTP.
func mcpServeRun(ctx context.Context, opts *MCPServeOptions) error {
	cfg, err := opts.Config()
	if err != nil {
		return err
	}
	sopts, err := mcpserver.Builtins(cfg, opts.DenyAsk)
	if err != nil {
		return failure(fmt.Errorf("mcp serve: %w", err))
	}
	sopts.Version, sopts.Log = opts.Version, slog.Default()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if opts.HTTP != "" {
		return serveMCPHTTP(ctx, opts.IO, opts.HTTP, mcpHTTPAuth{home: opts.Home(), token: opts.Token,
			insecure: opts.InsecureNoAuth, origins: cfg.Serve.AllowedOrigins}, sopts)
	}
	err = mcpserver.ServeStdio(ctx, sopts, opts.IO.In, opts.IO.Out)
	if err != nil && !errors.Is(err, context.Canceled) {
		return failure(fmt.Errorf("mcp serve: %w", err))
	}
	return nil
}

// mcpHTTPAuth is what --http's access check is built from.
type mcpHTTPAuth struct {
	home     string // the data directory, where the default token is kept
	token    string
	insecure bool
	origins  []string // serve.allowed_origins
}

// mcpMaxBody bounds one JSON-RPC request of `mcp serve --http`.
const mcpMaxBody = 8 << 20

func serveMCPHTTP(ctx context.Context, ios *IOStreams, addr string, a mcpHTTPAuth, opts mcpserver.Options) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usageErr(fmt.Errorf("mcp serve: --http %q: %w", addr, err), "e.g. --http 127.0.0.1:8765")
	}
	auth, err := resolveServeAuth(ios, a.home, "mcp serve", host, a.token, a.insecure)
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return failure(fmt.Errorf("mcp serve: %w", err))
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcpserver.Handler(opts))
	// A tool call's arguments (write_file's content) may be large, not
	// unbounded; SSE streams are bounded by their writes, not a timeout.
	srv := &http.Server{Handler: server.Guard(server.BodyLimit(mux, mcpMaxBody), auth.token, a.origins),
		ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute,
		MaxHeaderBytes: 64 << 10}
	fmt.Fprintf(ios.ErrOut, "openheim: MCP server listening on http://%s/mcp (%s); Ctrl-C stops\n", l.Addr(), auth.describe())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	select {
	case err := <-errc:
		return failure(fmt.Errorf("mcp serve: %w", err))
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(sctx)
	return nil
}
