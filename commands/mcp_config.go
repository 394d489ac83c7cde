package commands

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/openheim/openheim/runtime/config"
	"github.com/urfave/cli/v3"
)

// MCPAddOptions is everything `openheim mcp add` needs.
type MCPAddOptions struct {
	IO         *IOStreams
	ConfigPath func() string // the file to edit
	Name       string
	Server     config.MCPServer
}

func newCmdMCPAdd(f *Factory, runF func(context.Context, *MCPAddOptions) error) *cli.Command {
	opts := &MCPAddOptions{IO: f.IOStreams, ConfigPath: f.editedConfigPath}
	return &cli.Command{
		Name:      "add",
		Usage:     "add an MCP server to config.toml",
		ArgsUsage: "NAME [-- COMMAND ARGS...]",
		Description: `Adds [mcp_servers.NAME] to the config file, keeping its other lines and
comments. A stdio server is the command after "--"; an HTTP server is --url.
The result is checked before the file is replaced: an invalid server leaves it
untouched. A server with a header, an env value, a secret-looking argument or a
URL with credentials makes the file readable by you only (mode 0600), and
says so.

Examples:
  openheim mcp add everything -- npx -y @modelcontextprotocol/server-everything
  openheim mcp add fs --env LOG=1 -- mcp-server-filesystem /home/me/src
  openheim mcp add remote --url https://mcp.example.com/mcp --header "Authorization=Bearer $TOKEN"`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "url", Usage: "the server's Streamable HTTP `URL`"},
			&cli.StringSliceFlag{Name: "header", Usage: "an HTTP header `NAME=VALUE` (repeatable, with --url)"},
			&cli.StringSliceFlag{Name: "env", Usage: "an environment variable `KEY=VALUE` for the command (repeatable)"},
			&cli.StringFlag{Name: "cwd", Usage: "the command's working `DIR`"},
			&cli.IntFlag{Name: "tool-timeout", Usage: "seconds a tool call may take (default 600)"},
			&cli.IntFlag{Name: "startup-timeout", Usage: "seconds connecting may take (default 60)"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if err := mcpAddFlags(cmd, opts); err != nil {
				return err
			}
			return run(ctx, opts, runF, mcpAddRun)
		},
	}
}

// mcpAddFlags builds the server to add from mcp add's arguments and flags.
func mcpAddFlags(cmd *cli.Command, opts *MCPAddOptions) error {
	args := cmd.Args().Slice()
	if len(args) == 0 {
		return usageErr(errors.New("mcp add: give the server a NAME"), "openheim mcp add NAME -- COMMAND ARGS... | --url URL")
	}
	name, rest := args[0], args[1:]
	s := config.MCPServer{URL: cmd.String("url"), Cwd: cmd.String("cwd"),
		ToolTimeoutSecs: int(cmd.Int("tool-timeout")), StartupTimeoutSecs: int(cmd.Int("startup-timeout"))}
	if len(rest) > 0 {
		s.Command, s.Args = rest[0], rest[1:]
	}
	for flag, dst := range map[string]*map[string]string{"env": &s.Env, "header": &s.Headers} {
		for _, p := range cmd.StringSlice(flag) {
			k, v, err := splitPair(flag, p)
			if err != nil {
				return err
			}
			if *dst == nil {
				*dst = map[string]string{}
			}
			(*dst)[k] = v
		}
	}
	opts.Name, opts.Server = name, s
	return nil
}

func mcpAddRun(_ context.Context, opts *MCPAddOptions) error {
	path := opts.ConfigPath()
	if err := config.AddMCPServer(path, opts.Name, opts.Server); err != nil {
		return usageErr(fmt.Errorf("mcp add: %w", err), "")
	}
	fmt.Fprintf(opts.IO.ErrOut, "added MCP server %s to %s; check it with 'openheim mcp ls'\n", opts.Name, path)
	if opts.Server.HoldsSecret() {
		fmt.Fprintf(opts.IO.ErrOut, "openheim: %s now holds a secret (header, env or URL credentials): it is readable by you only (0600)\n", path)
	}
	return nil
}

// MCPRemoveOptions is everything `openheim mcp rm` needs.
type MCPRemoveOptions struct {
	IO         *IOStreams
	ConfigPath func() string // the file to edit
	Name       string
}

func newCmdMCPRemove(f *Factory, runF func(context.Context, *MCPRemoveOptions) error) *cli.Command {
	opts := &MCPRemoveOptions{IO: f.IOStreams, ConfigPath: f.editedConfigPath}
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
			opts.Name = cmd.Args().First()
			return run(ctx, opts, runF, mcpRemoveRun)
		},
	}
}

func mcpRemoveRun(_ context.Context, opts *MCPRemoveOptions) error {
	path := opts.ConfigPath()
	if err := config.RemoveMCPServer(path, opts.Name); err != nil {
		return usageErr(fmt.Errorf("mcp rm: %w", err), "")
	}
	fmt.Fprintf(opts.IO.ErrOut, "removed MCP server %s from %s\n", opts.Name, path)
	return nil
}

// splitPair splits "k=v" for --env, --header and --arg.
func splitPair(flag, s string) (string, string, error) {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return "", "", usageErr(fmt.Errorf("--%s %q: want KEY=VALUE", flag, s), "")
	}
	return k, v, nil
}
