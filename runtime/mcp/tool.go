package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/tools"
)

// maxNameLen is the longest tool name every provider accepts.
const maxNameLen = 64

// toolName is the name a server's tool is offered under: "{server}__{tool}"
// with every character outside [a-zA-Z0-9_-] replaced by '_'. A name longer
// than 64 characters is cut and ends with '_' and 8 hex digits of a hash of
// the full original name, so it stays unique and stable.
func toolName(server, tool string) string {
	full := server + "__" + tool
	name := cleanName(full)
	if len(name) > maxNameLen {
		name = withHash(name, full)
	}
	return name
}

// withHash cuts name to leave room for '_' + 8 hex digits of hash(full).
func withHash(name, full string) string {
	sum := sha256.Sum256([]byte(full))
	suffix := "_" + hex.EncodeToString(sum[:4])
	return name[:min(len(name), maxNameLen-len(suffix))] + suffix
}

func cleanName(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// allowed applies enabled_tools (empty: every tool) and disabled_tools
// (wins) to a raw tool name. A malformed pattern matches nothing (NewManager
// warns about it).
func allowed(enabled, disabled []string, name string) bool {
	if len(enabled) > 0 && !matchAny(enabled, name) {
		return false
	}
	return !matchAny(disabled, name)
}

func matchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if ok, err := doublestar.Match(p, name); ok && err == nil {
			return true
		}
	}
	return false
}

// ToolAdapter is a tools.Tool that calls one tool of an MCP server.
type ToolAdapter struct {
	s    *server
	raw  *mcp.Tool
	spec llm.ToolSpec
}

// Spec is the tool as offered to the model: the prefixed name, the server's
// description and input schema.
func (t *ToolAdapter) Spec() llm.ToolSpec { return t.spec }

// Kind is tools.KindRead when the server annotates the tool readOnlyHint
// (and not destructiveHint), else tools.KindOther. The default permission
// rules run read tools without asking and architect mode keeps them; an
// `ask` rule such as "server__*" overrides that for a server one distrusts.
func (t *ToolAdapter) Kind() string { return toolKind(t.raw) }

// Server is the name of the tool's MCP server.
func (t *ToolAdapter) Server() string { return t.s.name }

// RawName is the tool's name on its server.
func (t *ToolAdapter) RawName() string { return t.raw.Name }

// Run calls the tool, reconnecting to the server first if its connection
// is known to be gone. Every failure is an error result.
func (t *ToolAdapter) Run(ctx context.Context, args json.RawMessage) tools.Result {
	res, _ := t.s.call(ctx, t.raw.Name, args)
	return res
}

func toolKind(t *mcp.Tool) string {
	if a := t.Annotations; a != nil && a.ReadOnlyHint && (a.DestructiveHint == nil || !*a.DestructiveHint) {
		return tools.KindRead
	}
	return tools.KindOther
}

func newTool(s *server, raw *mcp.Tool, name string) *ToolAdapter {
	desc := raw.Description
	if desc == "" {
		desc = raw.Title
	}
	return &ToolAdapter{s: s, raw: raw, spec: llm.ToolSpec{Name: name, Description: desc, Parameters: inputSchema(raw.InputSchema)}}
}

// emptySchema is offered for a tool without a usable input schema.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// inputSchema is the tool's input schema as JSON: an object schema, with
// "properties" present because some providers require it.
func inputSchema(v any) json.RawMessage {
	if v == nil {
		return emptySchema
	}
	b, err := json.Marshal(v)
	if err != nil {
		return emptySchema
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil || m == nil {
		return emptySchema
	}
	changed := false
	if _, ok := m["type"]; !ok {
		m["type"], changed = "object", true
	}
	if _, ok := m["properties"]; !ok && m["type"] == "object" {
		m["properties"], changed = map[string]any{}, true
	}
	if changed {
		if b, err = json.Marshal(m); err != nil {
			return emptySchema
		}
	}
	return b
}

// toResult turns a tools/call result into what the model sees: text parts
// joined by newlines, images as image blocks, other parts described in
// text, and the structured content as JSON when there is no text.
func toResult(r *mcp.CallToolResult) tools.Result {
	var texts []string
	var images []message.Block
	for _, c := range r.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			texts = append(texts, c.Text)
		case *mcp.ImageContent:
			images = append(images, message.Block{Type: message.TypeImage,
				Data: base64.StdEncoding.EncodeToString(c.Data), MimeType: c.MIMEType})
		case *mcp.AudioContent:
			texts = append(texts, fmt.Sprintf("[audio: %s, %d bytes, not shown]", orUnknown(c.MIMEType), len(c.Data)))
		case *mcp.ResourceLink:
			texts = append(texts, describeLink(c))
		case *mcp.EmbeddedResource:
			texts = append(texts, describeResource(c.Resource))
		default:
			b, _ := json.Marshal(c)
			texts = append(texts, string(b))
		}
	}
	out := tools.Result{Content: strings.Join(texts, "\n"), IsError: r.IsError, Images: images}
	if len(texts) == 0 && r.StructuredContent != nil {
		if b, err := json.Marshal(r.StructuredContent); err == nil {
			out.Content = string(b)
		}
	}
	return out
}

func describeLink(l *mcp.ResourceLink) string {
	s := "[resource link: " + l.URI
	if l.Name != "" {
		s += " (" + l.Name + ")"
	}
	if l.MIMEType != "" {
		s += ", " + l.MIMEType
	}
	if l.Description != "" {
		s += ": " + l.Description
	}
	return s + "]"
}

func describeResource(r *mcp.ResourceContents) string {
	switch {
	case r == nil:
		return "[resource: empty]"
	case r.Text != "" || r.Blob == nil:
		return fmt.Sprintf("[resource %s]\n%s", r.URI, r.Text)
	default:
		return fmt.Sprintf("[resource %s: %s, %d bytes, not shown]", r.URI, orUnknown(r.MIMEType), len(r.Blob))
	}
}

func orUnknown(mime string) string {
	if mime == "" {
		return "unknown type"
	}
	return mime
}
