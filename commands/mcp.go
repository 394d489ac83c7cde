package commands

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/mcp"
	"github.com/urfave/cli/v3"
)

// startMCP connects the configured MCP servers in the background; nil when
// there are none. A failed server is reported on stderr and left out.
func startMCP(ctx context.Context, cfg *config.Config, ios *IOStreams, version string) *mcp.Manager {
	if len(cfg.MCPServers) == 0 {
		return nil
	}
	m := mcp.NewManager(cfg.MCPServers, mcp.Options{Version: version, Redact: cfg.Redactor(), Warn: func(name string, err error) {
		fmt.Fprintf(ios.ErrOut, "openheim: warning: MCP server %s: %v (its tools are left out)\n", name, err)
	}})
	m.Start(ctx)
	return m
}

// withMCP gives the engine the manager's tools; a nil manager adds none
// (and must not become a non-nil interface holding nil).
func withMCP(e *engine.Engine, m *mcp.Manager) *engine.Engine {
	if m != nil {
		e.MCP = m
	}
	return e
}

func newCmdMCP(ios *IOStreams, version string) *cli.Command {
	return &cli.Command{
		Name:  "mcp",
		Usage: "list, call, add and remove MCP servers; serve openheim's tools over MCP",
		Description: `openheim connects to the MCP servers of [mcp_servers.<name>] in the config and
offers their tools to the model as <server>__<tool>. These commands show what
they offer and let scripts call them. See docs/mcp.md.

Examples:
  openheim mcp ls
  openheim mcp tools github
  openheim mcp call everything echo --arg message=hi
  openheim mcp add fs -- npx -y @modelcontextprotocol/server-filesystem ~/src
  openheim mcp add remote --url https://mcp.example.com/mcp --header Authorization="Bearer $TOKEN"
  openheim mcp rm fs
  openheim mcp serve                      # openheim's tools to an MCP host over stdio`,
		Commands: []*cli.Command{
			newCmdMCPList(ios, version),
			newCmdMCPTools(ios, version),
			newCmdMCPCall(ios, version),
			newCmdMCPAdd(ios),
			newCmdMCPRemove(ios),
			newCmdMCPServe(ios, version),
		},
	}
}

// connectAll loads the config and connects its servers (or only the named
// one), waiting for them.
func connectAll(ctx context.Context, cmd *cli.Command, ios *IOStreams, version, only string) (*mcp.Manager, error) {
	cfg, err := loadConfig(cmd.Root().String("config"), ios)
	if err != nil {
		return nil, err
	}
	servers := cfg.MCPServers
	if only != "" {
		s, ok := servers[only]
		if !ok {
			return nil, usageErr(fmt.Errorf("mcp: no MCP server named %q in the config", only), "see 'openheim mcp ls'")
		}
		servers = map[string]*config.MCPServer{only: s}
	}
	// Failures are shown by each command (the status table, a warning
	// line), not logged a second time.
	m := mcp.NewManager(servers, mcp.Options{Version: version, Redact: cfg.Redactor(), Warn: func(string, error) {}})
	m.Start(ctx)
	m.Wait(ctx)
	return m, nil
}

func newCmdMCPList(ios *IOStreams, version string) *cli.Command {
	return &cli.Command{
		Name:  "ls",
		Usage: "connect to every configured MCP server and show its status",
		Description: `Connects to each server (concurrently, each bounded by its startup_timeout_secs)
and prints its transport, whether it connected, how many tools it offers and
why it failed. --json prints seed 000's McpServerStatus objects, one per line.
Exits 1 when a server failed.

Examples:
  openheim mcp ls
  openheim mcp ls --json
  openheim mcp ls --select error`,
		Flags: jsonFlags(),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if err := noArgs(cmd); err != nil {
				return err
			}
			m, err := connectAll(ctx, cmd, ios, version, "")
			if err != nil {
				return err
			}
			defer m.Close()
			status := m.Status()
			failed := 0
			for _, s := range status {
				if s.Error != nil {
					failed++
				}
			}
			if machineOutput(cmd) {
				for _, s := range status {
					if err := printJSON(ios, cmd, s); err != nil {
						return err
					}
				}
			} else {
				if len(status) == 0 {
					fmt.Fprintln(ios.ErrOut, "no MCP servers configured; add one with 'openheim mcp add'")
					return nil
				}
				tw := tabwriter.NewWriter(ios.Out, 0, 0, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tTRANSPORT\tSTATUS\tTOOLS\tTARGET")
				for _, s := range status {
					state := "connected"
					if !s.Connected {
						state = "failed: " + deref(s.Error)
					}
					target := deref(s.Command)
					if s.URL != nil {
						target = *s.URL
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", s.Name, s.Transport, state, s.ToolCount, target)
				}
				tw.Flush()
			}
			if failed > 0 {
				return failure(fmt.Errorf("mcp ls: %d of %d servers failed", failed, len(status)))
			}
			return nil
		},
	}
}

func newCmdMCPTools(ios *IOStreams, version string) *cli.Command {
	return &cli.Command{
		Name:      "tools",
		Usage:     "list the tools of the MCP servers (all, or one)",
		ArgsUsage: "[SERVER]",
		Description: `Lists each tool as the model sees it (<server>__<tool>, after enabled_tools and
disabled_tools), with its server's own name for it and a one-line description.
--json prints seed 000's Tool objects, one per line.

Examples:
  openheim mcp tools
  openheim mcp tools everything --json`,
		Flags: jsonFlags(),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 1 {
				return usageErr(errors.New("mcp tools: at most one SERVER"), "openheim mcp tools [SERVER]")
			}
			m, err := connectAll(ctx, cmd, ios, version, cmd.Args().First())
			if err != nil {
				return err
			}
			defer m.Close()
			for _, s := range m.Status() {
				if s.Error != nil {
					fmt.Fprintf(ios.ErrOut, "openheim: warning: MCP server %s: %s\n", s.Name, *s.Error)
				}
			}
			return printTools(ios, cmd, m.Tools())
		},
	}
}

func newCmdMCPRemove(ios *IOStreams) *cli.Command {
	return &cli.Command{
		Name:      "rm",
		Usage:     "remove an MCP server from config.toml",
		ArgsUsage: "NAME",
		Description: `Deletes the [mcp_servers.NAME] table (and its sub-tables) from the config
file, keeping every other line and comment as it was.

Examples:
  openheim mcp rm github`,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() != 1 {
				return usageErr(errors.New("mcp rm: give one server NAME"), "openheim mcp rm NAME")
			}
			path := configPath(cmd)
			if err := config.RemoveMCPServer(path, cmd.Args().First()); err != nil {
				return usageErr(fmt.Errorf("mcp rm: %w", err), "")
			}
			fmt.Fprintf(ios.ErrOut, "removed MCP server %s from %s\n", cmd.Args().First(), path)
			return nil
		},
	}
}

// configPath is the config file commands edit: --config, else the data
// directory's config.toml.
func configPath(cmd *cli.Command) string {
	if p := cmd.Root().String("config"); p != "" {
		return p
	}
	return filepath.Join(config.Home(), "config.toml")
}

// splitPair splits "k=v" for --env, --header and --arg.
func splitPair(flag, s string) (string, string, error) {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return "", "", usageErr(fmt.Errorf("--%s %q: want KEY=VALUE", flag, s), "")
	}
	return k, v, nil
}
