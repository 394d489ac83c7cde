package mcpserver

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/tools"
)

// toolOf describes t for tools/list: its spec as is, with hints from its kind.
func toolOf(t tools.Tool) (*mcp.Tool, error) {
	sp := t.Spec()
	schema, err := inputSchema(sp.Parameters)
	if err != nil {
		return nil, err
	}
	return &mcp.Tool{
		Name:        sp.Name,
		Description: sp.Description,
		InputSchema: schema,
		Annotations: annotations(t.Kind()),
	}, nil
}

// inputSchema returns the schema MCP requires: a JSON object of type
// "object". An empty schema means no parameters; a schema without a type is
// given type "object"; any other type cannot be served.
func inputSchema(raw json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage(`{"type":"object"}`), nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, errors.New("input schema is not a JSON object")
	}
	switch typ, ok := m["type"]; {
	case typ == "object":
		return raw, nil
	case !ok:
		m["type"] = "object"
		return json.Marshal(m)
	default:
		return nil, fmt.Errorf("input schema has type %v, MCP needs \"object\"", typ)
	}
}

// annotations maps an ACP tool kind to MCP's behaviour hints. Unknown kinds
// (tools.KindOther) get none: the MCP defaults assume the worst.
func annotations(kind string) *mcp.ToolAnnotations {
	yes, no := true, false
	switch kind {
	case tools.KindRead, tools.KindSearch, tools.KindThink:
		return &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &no}
	case tools.KindEdit, tools.KindDelete, tools.KindMove:
		return &mcp.ToolAnnotations{DestructiveHint: &yes, OpenWorldHint: &no}
	case tools.KindExecute:
		return &mcp.ToolAnnotations{DestructiveHint: &yes, OpenWorldHint: &yes}
	case tools.KindFetch:
		// Not marked read-only: a URL can carry data out, and openheim's
		// read-only (architect) mode leaves fetching out too.
		return &mcp.ToolAnnotations{DestructiveHint: &no, OpenWorldHint: &yes}
	}
	return nil
}

// handler runs t for tools/call: arguments (missing means {}), permission,
// then the tool with the request's context, so that the client's
// notifications/cancelled (or a closed session) cancels it.
func handler(opts Options, log *slog.Logger, t tools.Tool) mcp.ToolHandler {
	name := t.Spec().Name
	return func(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
		defer func() {
			// A bug in a tool (or in Permit) must not take the server,
			// and every other session, down with it.
			if p := recover(); p != nil {
				log.Error("mcp serve: tool panicked", "tool", name, "panic", p, "stack", string(debug.Stack()))
				res, err = errorResult(fmt.Sprintf("internal error: tool %s failed: %v", name, p)), nil
			}
		}()
		args := bytes.TrimSpace(req.Params.Arguments)
		if len(args) == 0 || string(args) == "null" {
			args = []byte("{}")
		}
		if args[0] != '{' {
			return errorResult("arguments must be a JSON object"), nil
		}
		if opts.Permit != nil {
			if ok, why := opts.Permit(ctx, name, args); !ok {
				log.Info("mcp serve: call refused", "tool", name, "why", why)
				if why == "" {
					return errorResult("permission denied"), nil
				}
				return errorResult("permission denied: " + why), nil
			}
		}
		return resultOf(t.Run(ctx, json.RawMessage(args)), log), nil
	}
}

func errorResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: true}
}

// resultOf converts a tool result: its text first (left out only when empty
// and there are images), then its images.
func resultOf(r tools.Result, log *slog.Logger) *mcp.CallToolResult {
	content := []mcp.Content{}
	if r.Content != "" || len(r.Images) == 0 {
		content = append(content, &mcp.TextContent{Text: r.Content})
	}
	for _, b := range r.Images {
		if b.Type != message.TypeImage {
			continue
		}
		data, err := base64.StdEncoding.DecodeString(b.Data)
		if err != nil {
			log.Warn("mcp serve: image not sent: bad base64", "err", err)
			continue
		}
		content = append(content, &mcp.ImageContent{Data: data, MIMEType: b.MimeType})
	}
	return &mcp.CallToolResult{Content: content, IsError: r.IsError}
}
