package commands

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/mcp"
	"github.com/openheim/openheim/runtime/tools"
	"github.com/urfave/cli/v3"
)

// MCPCallOptions is everything `openheim mcp call` needs.
type MCPCallOptions struct {
	IO       *IOStreams
	Config   func() (*config.Config, error)
	MCP      func(ctx context.Context, cfg *config.Config, only string) (*mcp.Manager, error)
	Server   string
	Tool     string // the server's own name for it
	Args     []string
	JSONArgs string
	JSON     bool
}

func newCmdMCPCall(f *Factory, runF func(context.Context, *MCPCallOptions) error) *cli.Command {
	opts := &MCPCallOptions{IO: f.IOStreams, Config: f.Config, MCP: f.MCP}
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
			if len(cmd.StringSlice("arg")) > 0 && cmd.String("json-args") != "" {
				return usageErr(errors.New("mcp call: use --arg or --json-args, not both"), "")
			}
			opts.Server, opts.Tool = cmd.Args().Get(0), cmd.Args().Get(1)
			opts.Args, opts.JSONArgs, opts.JSON = cmd.StringSlice("arg"), cmd.String("json-args"), cmd.Bool("json")
			return run(ctx, opts, runF, mcpCallRun)
		},
	}
}

func mcpCallRun(ctx context.Context, opts *MCPCallOptions) error {
	m, err := connectConfigured(ctx, opts.Config, opts.MCP, opts.Server)
	if err != nil {
		return err
	}
	defer m.Close()
	if st := m.Status(); len(st) == 1 && st[0].Error != nil {
		return failure(fmt.Errorf("mcp call: server %s: %s", opts.Server, *st[0].Error))
	}
	args, err := callArgs(ctx, m.ServerTools, opts)
	if err != nil {
		return err
	}
	res, err := m.Call(ctx, opts.Server, opts.Tool, args)
	if err != nil {
		return failure(fmt.Errorf("mcp call: %w", err))
	}
	if err := printResult(opts.IO, opts.JSON, res); err != nil {
		return err
	}
	if res.IsError {
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("mcp call: %s reported an error", opts.Tool), Silent: opts.JSON}
	}
	return nil
}

// callArgs builds the arguments object from --json-args or --arg pairs,
// typed by the tool's input schema.
func callArgs[T any](ctx context.Context, list func(context.Context, string) ([]T, error), opts *MCPCallOptions) (json.RawMessage, error) {
	if raw := opts.JSONArgs; raw != "" {
		var obj map[string]any
		if err := json.Unmarshal([]byte(raw), &obj); err != nil {
			return nil, usageErr(fmt.Errorf("mcp call: --json-args is not a JSON object: %w", err), "")
		}
		return json.RawMessage(raw), nil
	}
	props := map[string]string{}
	if len(opts.Args) > 0 {
		if ts, err := list(ctx, opts.Server); err == nil {
			props = schemaTypes(ts, opts.Tool)
		}
	}
	args := map[string]any{}
	for _, p := range opts.Args {
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
func printTools(ios *IOStreams, out jsonOutput, ts []tools.Tool) error {
	reg := tools.NewRegistry(ts...)
	if out.machine() {
		for _, t := range acp.ToolObjects(reg.Specs()) {
			if err := out.print(ios, t); err != nil {
				return err
			}
		}
		return nil
	}
	tw := newTable(ios.Out)
	fmt.Fprintln(tw, "NAME\tKIND\tDESCRIPTION")
	for _, t := range reg.Tools() {
		s := t.Spec()
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Name, t.Kind(), firstSentence(s.Description))
	}
	return tw.Flush()
}
