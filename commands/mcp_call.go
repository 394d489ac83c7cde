package commands

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"text/tabwriter"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/tools"
	"github.com/urfave/cli/v3"
)

func newCmdMCPCall(ios *IOStreams, version string) *cli.Command {
	return &cli.Command{
		Name:      "call",
		Usage:     "call one tool of an MCP server and print its result",
		ArgsUsage: "SERVER TOOL",
		Description: `Calls TOOL (the server's own name for it) with arguments from --arg KEY=VALUE
(repeatable; VALUE is converted to the type the tool's schema gives the key:
numbers, booleans, or JSON for objects and arrays) or --json-args '{...}'.
Prints the text the tool returned; images are listed by type and size.
--json prints {"content", "isError", "images": [{"mimeType", "bytes"}]}.
Exits 1 when the tool reports an error.

Examples:
  openheim mcp call everything echo --arg message=hello
  openheim mcp call everything get-sum --arg a=2 --arg b=3
  openheim mcp call github search_repositories --json-args '{"query":"openheim"}'`,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "arg", Usage: "an argument as `KEY=VALUE` (repeatable)"},
			&cli.StringFlag{Name: "json-args", Usage: "all arguments as one JSON `OBJECT`"},
			&cli.BoolFlag{Name: "json", Usage: "print the result as JSON"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() != 2 {
				return usageErr(errors.New("mcp call: give SERVER and TOOL"), "openheim mcp call SERVER TOOL --arg key=value")
			}
			server, tool := cmd.Args().Get(0), cmd.Args().Get(1)
			if len(cmd.StringSlice("arg")) > 0 && cmd.String("json-args") != "" {
				return usageErr(errors.New("mcp call: use --arg or --json-args, not both"), "")
			}
			m, err := connectAll(ctx, cmd, ios, version, server)
			if err != nil {
				return err
			}
			defer m.Close()
			if st := m.Status(); len(st) == 1 && st[0].Error != nil {
				return failure(fmt.Errorf("mcp call: server %s: %s", server, *st[0].Error))
			}
			args, err := callArgs(ctx, cmd, m.ServerTools, server, tool)
			if err != nil {
				return err
			}
			res, err := m.Call(ctx, server, tool, args)
			if err != nil {
				return failure(fmt.Errorf("mcp call: %w", err))
			}
			if err := printResult(ios, cmd.Bool("json"), res); err != nil {
				return err
			}
			if res.IsError {
				return &ExitError{Code: ExitFailure, Err: fmt.Errorf("mcp call: %s reported an error", tool), Silent: cmd.Bool("json")}
			}
			return nil
		},
	}
}

// callArgs builds the arguments object from --json-args or --arg pairs,
// typed by the tool's input schema.
func callArgs[T any](ctx context.Context, cmd *cli.Command, list func(context.Context, string) ([]T, error), server, tool string) (json.RawMessage, error) {
	if raw := cmd.String("json-args"); raw != "" {
		var obj map[string]any
		if err := json.Unmarshal([]byte(raw), &obj); err != nil {
			return nil, usageErr(fmt.Errorf("mcp call: --json-args is not a JSON object: %w", err), "")
		}
		return json.RawMessage(raw), nil
	}
	props := map[string]string{}
	if pairs := cmd.StringSlice("arg"); len(pairs) > 0 {
		if ts, err := list(ctx, server); err == nil {
			props = schemaTypes(ts, tool)
		}
	}
	args := map[string]any{}
	for _, p := range cmd.StringSlice("arg") {
		k, v, err := splitPair("arg", p)
		if err != nil {
			return nil, err
		}
		args[k] = typedValue(props[k], v)
	}
	b, err := json.Marshal(args)
	return b, err
}

// schemaTypes maps the tool's top-level argument names to their JSON
// Schema types.
func schemaTypes[T any](ts []T, tool string) map[string]string {
	out := map[string]string{}
	for _, t := range ts {
		var d struct {
			Name        string `json:"name"`
			InputSchema struct {
				Properties map[string]struct {
					Type any `json:"type"`
				} `json:"properties"`
			} `json:"inputSchema"`
		}
		b, _ := json.Marshal(t)
		if json.Unmarshal(b, &d) != nil || d.Name != tool {
			continue
		}
		for k, p := range d.InputSchema.Properties {
			if s, ok := p.Type.(string); ok {
				out[k] = s
			}
		}
	}
	return out
}

// typedValue converts an --arg VALUE to the schema's type; a value that
// does not convert stays a string (the server then says what is wrong).
func typedValue(typ, v string) any {
	switch typ {
	case "string":
		return v
	case "integer":
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return n
		}
	case "number":
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return f
		}
	case "boolean":
		if b, err := strconv.ParseBool(v); err == nil {
			return b
		}
	case "object", "array", "":
		var j any
		if json.Unmarshal([]byte(v), &j) == nil && (typ != "" || isComposite(j)) {
			return j
		}
	}
	return v
}

func isComposite(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return true
	}
	return false
}

type imageInfo struct {
	MimeType string `json:"mimeType"`
	Bytes    int    `json:"bytes"`
}

func printResult(ios *IOStreams, asJSON bool, res tools.Result) error {
	var images []imageInfo
	for _, img := range res.Images {
		n, _ := base64.StdEncoding.DecodeString(img.Data)
		images = append(images, imageInfo{MimeType: img.MimeType, Bytes: len(n)})
	}
	if asJSON {
		b, err := json.Marshal(struct {
			Content string      `json:"content"`
			IsError bool        `json:"isError"`
			Images  []imageInfo `json:"images"`
		}{res.Content, res.IsError, append([]imageInfo{}, images...)})
		if err != nil {
			return failure(err)
		}
		_, err = fmt.Fprintf(ios.Out, "%s\n", b)
		return err
	}
	out := ios.Out
	if res.IsError {
		out = ios.ErrOut
	}
	if res.Content != "" {
		fmt.Fprintln(out, res.Content)
	}
	for _, i := range images {
		fmt.Fprintf(out, "[image: %s, %d bytes]\n", i.MimeType, i.Bytes)
	}
	return nil
}

// printTools lists tools as `openheim tools` does, with --json/--select.
func printTools(ios *IOStreams, cmd *cli.Command, ts []tools.Tool) error {
	reg := tools.NewRegistry(ts...)
	if machineOutput(cmd) {
		for _, t := range acp.ToolObjects(reg.Specs()) {
			if err := printJSON(ios, cmd, t); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(ios.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tKIND\tDESCRIPTION")
	for _, t := range reg.Tools() {
		s := t.Spec()
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Name, t.Kind(), firstSentence(s.Description))
	}
	return tw.Flush()
}

func newCmdMCPAdd(ios *IOStreams) *cli.Command {
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
			path := configPath(cmd)
			if err := config.AddMCPServer(path, name, s); err != nil {
				return usageErr(fmt.Errorf("mcp add: %w", err), "")
			}
			fmt.Fprintf(ios.ErrOut, "added MCP server %s to %s; check it with 'openheim mcp ls'\n", name, path)
			if s.HoldsSecret() {
				fmt.Fprintf(ios.ErrOut, "openheim: %s now holds a secret (header, env or URL credentials): it is readable by you only (0600)\n", path)
			}
			return nil
		},
	}
}
