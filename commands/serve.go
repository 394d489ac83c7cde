package commands

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/openheim/openheim/protocol/server"
	"github.com/openheim/openheim/runtime/backend/jetstream"
	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/session"
	"github.com/urfave/cli/v3"
)

// shutdownGrace bounds a graceful shutdown: turns cancelled, sessions
// saved, clients told and closed.
const shutdownGrace = 15 * time.Second

// ServeOptions is everything `openheim serve` needs.
type ServeOptions struct {
	IO             *IOStreams
	Config         func() (*config.Config, error)
	Sessions       func() (*Sessions, error)
	Runtime        func(ctx context.Context, cfg *config.Config, s *Sessions, withMCP bool) (*Runtime, func())
	Home           func() string // the data directory: the default token, the web client's files
	Version        string
	Host           string
	Port           int
	Token          string
	InsecureNoAuth bool
}

func newCmdServe(f *Factory, runF func(context.Context, *ServeOptions) error) *cli.Command {
	opts := &ServeOptions{IO: f.IOStreams, Config: f.Config, Sessions: f.Sessions, Runtime: f.Runtime,
		Home: f.Home, Version: f.Version}
	return &cli.Command{
		Name:  "serve",
		Usage: "serve the web client, the REST and SSE APIs and the /ws and /acp WebSockets",
		Description: `Serves the built-in web client at / (open it in a browser), the Openheim API:
REST under /api (config, models, skills, tools, mcp-servers, sessions), the
multiplexed WebSocket /ws (ACP on channel "agent", live file operations on
channel "fs", notices on channel "system"), bare ACP on the WebSocket /acp,
the session-first REST + SSE API under /api/agents and /v1 (seed 003), and
/healthz. See docs/serve.md and docs/sessions-api.md.

It listens on 127.0.0.1:1217 by default and requires a token of every
request, loopback included: the one given (--token or OPENHEIM_TOKEN), else
a random one it makes on first use and keeps (mode 0600) in
$OPENHEIM_HOME/serve_token. It prints the web client's address with the
token after "#" (never sent to the server, so never in an access log); API
clients send "Authorization: Bearer <token>", and a browser opening a
WebSocket may pass ?token=<token> instead. Whoever holds the token can do
everything the agent can: run its tools in work_dir, the shell when
allow_shell is on. --insecure-no-auth turns the token off, on a loopback
address only. Browsers are refused unless their Origin is the server's own
or listed in serve.allowed_origins of the config.

SIGINT or SIGTERM stops it gracefully: running turns are cancelled and their
sessions saved, WebSocket clients get a "shutting_down" notice on the system
channel, then the connections close. It then exits 0.

Examples:
  openheim serve
  openheim serve --port 8080
  OPENHEIM_TOKEN=$(openssl rand -hex 32) openheim serve --host 0.0.0.0
  curl -H "Authorization: Bearer $(cat ~/.openheim/serve_token)" http://127.0.0.1:1217/api/sessions
  curl -sN -H "Authorization: Bearer $OPENHEIM_TOKEN" http://host:1217/v1/sessions/conv_<id>/stream`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "host", Value: "127.0.0.1", Usage: "address to listen on"},
			&cli.IntFlag{Name: "port", Value: 1217, Usage: "port to listen on (0 picks a free one)"},
			&cli.StringFlag{Name: "token", Usage: "require this bearer token (default $OPENHEIM_TOKEN, else the one kept in $OPENHEIM_HOME/serve_token)", Sources: cli.EnvVars("OPENHEIM_TOKEN")},
			&cli.BoolFlag{Name: "insecure-no-auth", Usage: "require no token (loopback addresses only; anyone on this machine can then use the agent)"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if err := noArgs(cmd); err != nil {
				return err
			}
			opts.Host, opts.Port, opts.Token = cmd.String("host"), int(cmd.Int("port")), cmd.String("token")
			opts.InsecureNoAuth = cmd.Bool("insecure-no-auth")
			f.serving = true // a cluster lists this process as a replica
			return run(ctx, opts, runF, serveRun)
		},
	}
}

func serveRun(ctx context.Context, opts *ServeOptions) error {
	if opts.Port < 0 || opts.Port > 65535 {
		return usageErr(fmt.Errorf("serve: port %d is out of range", opts.Port), "use 0-65535 (0 picks a free port)")
	}
	auth, err := resolveServeAuth(opts.IO, opts.Home(), "serve", opts.Host, opts.Token, opts.InsecureNoAuth)
	if err != nil {
		return err
	}
	cfg, err := opts.Config()
	if err != nil {
		return err
	}
	if auth.token != "" {
		// Logs never quote the token (a handshake's ?token= in a debug line);
		// only the one line below that prints the web client's address does.
		logRedactor.Store(logRedactor.Load().With(auth.token))
	}
	sess, err := opts.Sessions()
	if err != nil {
		return err
	}
	sess.Catalog.Progress = nil
	if sess.Dir != "" {
		session.SweepSpares(sess.Dir) // files left by crashed processes
	}

	l, err := net.Listen("tcp", net.JoinHostPort(opts.Host, strconv.Itoa(opts.Port)))
	if err != nil {
		return failure(fmt.Errorf("serve: %w", err))
	}
	rt, release := opts.Runtime(ctx, cfg, sess, true)
	defer release()
	sopts := server.Options{Engine: rt.Engine, Catalog: sess.Catalog, Version: opts.Version, Token: auth.token,
		InsecureNoAuth: auth.token == "", Loopback: server.IsLoopback(opts.Host), DataDir: opts.Home(), Backend: sess.Backend}
	if c, ok := sess.Backend.(*jetstream.Backend); ok {
		relay := c.Relay()
		sopts.Relay, sopts.Forwarder = relay, relay
		defer c.Close() // after the server: its turns release their leases first
	}
	srv, err := server.New(sopts)
	if err != nil {
		return failure(fmt.Errorf("serve: %w", err))
	}
	announceServe(opts.IO, "http://"+l.Addr().String(), auth)

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = srv.Serve(ctx, l, shutdownGrace)
	if err != nil && !errors.Is(err, context.Canceled) {
		return failure(fmt.Errorf("serve: %w", err))
	}
	fmt.Fprintln(opts.IO.ErrOut, "openheim: stopped")
	return nil
}

// announceServe says where the server listens and how to open the web
// client.
func announceServe(ios *IOStreams, base string, auth serveAuth) {
	fmt.Fprintf(ios.ErrOut, "openheim: listening on %s (%s); Ctrl-C stops\n", base, auth.describe())
	if auth.stored != nil {
		// After "#": the browser keeps it to itself, so it reaches no
		// request line or access log; the web client takes it from there.
		fmt.Fprintf(ios.ErrOut, "openheim: web client: %s/#token=%s\n", base, auth.stored.Value)
	} else {
		fmt.Fprintf(ios.ErrOut, "openheim: web client: %s/\n", base)
	}
}
