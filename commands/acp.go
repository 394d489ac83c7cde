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
	"github.com/urfave/cli/v3"
)

func newCmdACP(ios *IOStreams, version string) *cli.Command {
	return &cli.Command{
		Name:  "acp",
		Usage: "run as an Agent Client Protocol agent over stdio (for editors)",
		Description: `Speaks ACP v1 (JSON-RPC 2.0, one message per line) on stdin and stdout, so
editors such as Zed run openheim as their agent. Nothing but protocol goes to
stdout; logs go to stderr. It exits when stdin closes, after cancelling
running turns (their sessions keep what was done). See docs/acp.md.

'openheim acp agents' lists the external ACP agents openheim itself can drive
(prompt --agent, chat --agent).

Examples:
  openheim acp
  # Zed settings.json:
  #   "agent_servers": { "openheim": { "command": "openheim", "args": ["acp"] } }`,
		Commands: []*cli.Command{newCmdACPAgents(ios, version)},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if err := noArgs(cmd); err != nil {
				return err
			}
			cfg, err := loadConfig(cmd.Root().String("config"), ios)
			if err != nil {
				return err
			}
			env, err := openSessions(ios)
			if err != nil {
				return err
			}
			env.catalog.Progress = nil // stderr is the editor's log, not a terminal
			ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
			defer stop()
			// Servers connect in the background; the first turn waits for
			// them (bounded by their startup timeouts).
			servers := startMCP(ctx, cfg, ios, version)
			if servers != nil {
				defer servers.Close()
			}
			eng := withMCP(newEngine(cfg, env), servers)
			defer withMemory(eng, cfg, ios)()
			agent := &acpagent.Agent{
				Engine:  eng,
				Catalog: env.catalog,
				Version: version,
			}
			err = agent.Serve(ctx, jsonrpc.NewLineStream(ios.In, ios.Out, nil))
			if err != nil && !errors.Is(err, context.Canceled) {
				return failure(fmt.Errorf("acp: %w", err))
			}
			return nil
		},
	}
}
