package commands

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	acpagent "github.com/openheim/openheim/protocol/acp/agent"
	"github.com/openheim/openheim/protocol/jsonrpc"
	"github.com/openheim/openheim/runtime/config"
	"github.com/urfave/cli/v3"
)

// ACPOptions is everything `openheim acp` needs.
type ACPOptions struct {
	IO       *IOStreams
	Config   func() (*config.Config, error)
	Sessions func() (*Sessions, error)
	Runtime  func(ctx context.Context, cfg *config.Config, s *Sessions, withMCP bool) (*Runtime, func())
	Version  string
}

func newCmdACP(f *Factory, runF func(context.Context, *ACPOptions) error) *cli.Command {
	opts := &ACPOptions{IO: f.IOStreams, Config: f.Config, Sessions: f.Sessions, Runtime: f.Runtime, Version: f.Version}
	return &cli.Command{
		Name:  "acp",
		Usage: "run as an Agent Client Protocol agent over stdio (for editors)",
		Description: `Speaks ACP v1 (JSON-RPC 2.0, one message per line) on stdin and stdout, so
editors such as Zed run openheim as their agent. Nothing but protocol goes to
stdout; logs go to stderr. It exits when stdin closes, after cancelling
running turns (their sessions keep what was done). See docs/acp.md.

'openheim acp agents' lists the external ACP agents openheim itself can drive
(prompt --agent, chat --agent); 'openheim acp sessions' manages their own
sessions and 'openheim acp logout' logs one out.

Examples:
  openheim acp
  # Zed settings.json:
  #   "agent_servers": { "openheim": { "command": "openheim", "args": ["acp"] } }`,
		Commands: []*cli.Command{newCmdACPAgents(f, nil), newCmdACPSessions(f, nil), newCmdACPLogout(f, nil)},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if err := noArgs(cmd); err != nil {
				return err
			}
			return run(ctx, opts, runF, acpRun)
		},
	}
}

// acpRun serves ACP on stdin and stdout until stdin closes.
func acpRun(ctx context.Context, opts *ACPOptions) error {
	cfg, err := opts.Config()
	if err != nil {
		return err
	}
	sess, err := opts.Sessions()
	if err != nil {
		return err
	}
	sess.Catalog.Progress = nil // stderr is the editor's log, not a terminal
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Servers connect in the background; the first turn waits for them
	// (bounded by their startup timeouts).
	rt, release := opts.Runtime(ctx, cfg, sess, true)
	defer release()
	agent := &acpagent.Agent{
		Engine:  rt.Engine,
		Catalog: sess.Catalog,
		Version: opts.Version,
	}
	err = agent.Serve(ctx, jsonrpc.NewLineStream(opts.IO.In, opts.IO.Out, nil))
	if err != nil && !errors.Is(err, context.Canceled) {
		return failure(fmt.Errorf("acp: %w", err))
	}
	return nil
}
