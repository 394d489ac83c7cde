package commands

import (
	"context"
	"errors"
	"fmt"

	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/mcp"
	"github.com/urfave/cli/v3"
)

func newCmdMCP(f *Factory) *cli.Command {
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
			newCmdMCPList(f, nil),
			newCmdMCPTools(f, nil),
			newCmdMCPCall(f, nil),
			newCmdMCPAdd(f, nil),
			newCmdMCPRemove(f, nil),
			newCmdMCPServe(f, nil),
		},
	}
}

// connectMCP connects cfg's MCP servers (or only the one named), waiting
// for them.
func connectMCP(ctx context.Context, cfg *config.Config, version, only string) (*mcp.Manager, error) {
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

// connectConfigured loads the config and connects its servers (or only
// the one named) with connect.
func connectConfigured(ctx context.Context, load func() (*config.Config, error),
	connect func(context.Context, *config.Config, string) (*mcp.Manager, error), only string) (*mcp.Manager, error) {
	cfg, err := load()
	if err != nil {
		return nil, err
	}
	return connect(ctx, cfg, only)
}

// MCPListOptions is everything `openheim mcp ls` needs.
type MCPListOptions struct {
	IO     *IOStreams
	Config func() (*config.Config, error)
	MCP    func(ctx context.Context, cfg *config.Config, only string) (*mcp.Manager, error)
	Output jsonOutput
}

func newCmdMCPList(f *Factory, runF func(context.Context, *MCPListOptions) error) *cli.Command {
	opts := &MCPListOptions{IO: f.IOStreams, Config: f.Config, MCP: f.MCP}
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
			opts.Output = jsonOutputOf(cmd)
			return run(ctx, opts, runF, mcpListRun)
		},
	}
}

func mcpListRun(ctx context.Context, opts *MCPListOptions) error {
	m, err := connectConfigured(ctx, opts.Config, opts.MCP, "")
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
	if opts.Output.machine() {
		for _, s := range status {
			if err := opts.Output.print(opts.IO, s); err != nil {
				return err
			}
		}
	} else {
		if len(status) == 0 {
			fmt.Fprintln(opts.IO.ErrOut, "no MCP servers configured; add one with 'openheim mcp add'")
			return nil
		}
		printMCPStatus(opts.IO, status)
	}
	if failed > 0 {
		return failure(fmt.Errorf("mcp ls: %d of %d servers failed", failed, len(status)))
	}
	return nil
}

func printMCPStatus(ios *IOStreams, status []mcp.Status) {
	tw := newTable(ios.Out)
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

// MCPToolsOptions is everything `openheim mcp tools` needs.
type MCPToolsOptions struct {
	IO     *IOStreams
	Config func() (*config.Config, error)
	MCP    func(ctx context.Context, cfg *config.Config, only string) (*mcp.Manager, error)
	Server string // "" lists every server's
	Output jsonOutput
}

func newCmdMCPTools(f *Factory, runF func(context.Context, *MCPToolsOptions) error) *cli.Command {
	opts := &MCPToolsOptions{IO: f.IOStreams, Config: f.Config, MCP: f.MCP}
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
			opts.Server, opts.Output = cmd.Args().First(), jsonOutputOf(cmd)
			return run(ctx, opts, runF, mcpToolsRun)
		},
	}
}

func mcpToolsRun(ctx context.Context, opts *MCPToolsOptions) error {
	m, err := connectConfigured(ctx, opts.Config, opts.MCP, opts.Server)
	if err != nil {
		return err
	}
	defer m.Close()
	for _, s := range m.Status() {
		if s.Error != nil {
			fmt.Fprintf(opts.IO.ErrOut, "openheim: warning: MCP server %s: %s\n", s.Name, *s.Error)
		}
	}
	return printTools(opts.IO, opts.Output, m.Tools())
}
