package commands

import (
	"context"
	"encoding/json"
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
	"github.com/openheim/openheim/runtime/mcpserver"
	"github.com/openheim/openheim/runtime/permission"
	"github.com/openheim/openheim/runtime/tools"
	"github.com/urfave/cli/v3"
)

func newCmdMCPServe(ios *IOStreams, version string) *cli.Command {
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
			cfg, err := loadConfig(cmd.Root().String("config"), ios)
			if err != nil {
				return err
			}
			reg, err := tools.Builtins(tools.Options{WorkDir: cfg.WorkDir, AllowShell: cfg.AllowShell})
			if err != nil {
				return failure(fmt.Errorf("mcp serve: %w", err))
			}
			rules := permission.Rules(cfg.Permissions)
			denyAsk := cmd.Bool("deny-ask")
			opts := mcpserver.Options{Tools: reg, Version: version, Log: slog.Default(),
				Permit: func(_ context.Context, tool string, _ json.RawMessage) (bool, string) {
					kind := tools.KindOther
					if t, ok := reg.Get(tool); ok {
						kind = t.Kind()
					}
					switch rules.Decide(tool, kind) {
					case permission.Deny:
						return false, "the [permissions] rules deny " + tool
					case permission.Ask:
						if denyAsk {
							return false, "the [permissions] rules ask about " + tool + " and --deny-ask refuses it"
						}
					}
					return true, ""
				}}
			ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
			defer stop()
			if addr := cmd.String("http"); addr != "" {
				return serveMCPHTTP(ctx, ios, addr, mcpHTTPAuth{token: cmd.String("token"), insecure: cmd.Bool("insecure-no-auth"),
					origins: cfg.Serve.AllowedOrigins}, opts)
			}
			err = mcpserver.ServeStdio(ctx, opts, ios.In, ios.Out)
			if err != nil && !errors.Is(err, context.Canceled) {
				return failure(fmt.Errorf("mcp serve: %w", err))
			}
			return nil
		},
	}
}

// mcpHTTPAuth is what --http's access check is built from.
type mcpHTTPAuth struct {
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
	auth, err := resolveServeAuth(ios, "mcp serve", host, a.token, a.insecure)
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
