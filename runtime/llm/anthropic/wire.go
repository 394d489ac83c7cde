package anthropic

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/message"
)

// Wire shapes of the Messages API request. Only what openheim sends is
// modelled. Content blocks are one struct per type so each carries exactly
// its own fields (the API rejects unknown ones).

type anRequest struct {
	Model     string      `json:"model"`
	MaxTokens int         `json:"max_tokens"`
	System    string      `json:"system,omitempty"`
	Messages  []anMessage `json:"messages"`
	Tools     []anTool    `json:"tools,omitempty"`
	Thinking  *anThinking `json:"thinking,omitempty"`
	Stream    bool        `json:"stream"`
}

// anThinking is {"type":"adaptive"} or {"type":"enabled","budget_tokens":N}
// (see thinking.go).
type anThinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens,omitempty"`
}

type anMessage struct {
	Role    string `json:"role"`
	Content []any  `json:"content"`
}

type anTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type anText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type anThinkingBlock struct {
	Type      string `json:"type"`
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
}

type anRedacted struct {
	Type string `json:"type"`
	Data string `json:"data"`
}

type anImage struct {
	Type   string        `json:"type"`
	Source anImageSource `json:"source"`
}

type anImageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

type anToolUse struct {
	Type  string          `json:"type"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

type anToolResult struct {
	Type      string `json:"type"`
	ToolUseID string `json:"tool_use_id"`
	Content   string `json:"content,omitempty"`
	IsError   bool   `json:"is_error,omitempty"`
}

// anDefaultMaxTokens is the cap when neither the request nor the config sets
// one: the API requires max_tokens.
const anDefaultMaxTokens = 16000

// anMinThinkingBudget is the smallest budget_tokens the API accepts.
const anMinThinkingBudget = 1024

// anObjectSchema stands in for a tool without a schema: the API requires an
// object schema.
var anObjectSchema = json.RawMessage(`{"type":"object"}`)

// anEmptyInput stands in for tool_use arguments that are not an object.
var anEmptyInput = json.RawMessage(`{}`)

// buildAnRequest converts a Request into the wire request. maxTokens is the
// effective cap; thinking is the thinking field to send (nil: none).
func buildAnRequest(req *llm.Request, maxTokens int, thinking *anThinking) *anRequest {
	out := &anRequest{Model: req.Model, MaxTokens: maxTokens, Stream: true}
	var systems []string
	if req.System != "" {
		systems = append(systems, req.System)
	}
	b := &anBuilder{}
	for _, m := range req.Messages {
		if m.Role == message.RoleSystem {
			// The API has no system role inside messages.
			if s := strings.TrimSpace(m.JoinText()); s != "" {
				systems = append(systems, s)
			}
			continue
		}
		b.add(m)
	}
	out.System = strings.Join(systems, "\n\n")
	out.Messages = b.messages()
	for _, t := range req.Tools {
		schema := t.Parameters
		if len(bytes.TrimSpace(schema)) == 0 || string(bytes.TrimSpace(schema)) == "{}" {
			schema = anObjectSchema
		}
		out.Tools = append(out.Tools, anTool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	if thinking != nil && !anUnsignedToolTurn(out.Messages) {
		out.Thinking = thinking
	}
	return out
}

// anUnsignedToolTurn reports whether the conversation ends in tool results
// answering an assistant turn that does not start with a thinking block
// (e.g. produced by another provider, or with thinking off). With thinking
// enabled the API rejects such a request ("Expected thinking or
// redacted_thinking, but found tool_use"), so that call goes without it.
func anUnsignedToolTurn(msgs []anMessage) bool {
	n := len(msgs)
	if n < 2 || msgs[n-1].Role != "user" || msgs[n-2].Role != "assistant" || len(msgs[n-2].Content) == 0 {
		return false
	}
	if _, ok := msgs[n-1].Content[0].(anToolResult); !ok {
		return false
	}
	switch msgs[n-2].Content[0].(type) {
	case anThinkingBlock, anRedacted:
		return false
	}
	return true
}

// anBuilder merges the conversation into strictly alternating user and
// assistant messages, as the API requires.
type anBuilder struct {
	out []anMessage
	// results and rest are the pending user message: tool_result blocks
	// must come first in it, whatever order the history filed them in.
	results, rest []any
	inUser        bool
}

func (b *anBuilder) flushUser() {
	if b.inUser {
		if content := append(b.results, b.rest...); len(content) > 0 {
			b.out = append(b.out, anMessage{Role: "user", Content: content})
		}
	}
	b.results, b.rest, b.inUser = nil, nil, false
}

func (b *anBuilder) add(m message.Message) {
	if m.Role == message.RoleAssistant {
		blocks := anAssistantBlocks(m.Content)
		if len(blocks) == 0 {
			return // nothing sendable: let the neighbours merge
		}
		b.flushUser()
		if n := len(b.out); n > 0 && b.out[n-1].Role == "assistant" {
			b.out[n-1].Content = append(b.out[n-1].Content, blocks...)
			return
		}
		b.out = append(b.out, anMessage{Role: "assistant", Content: blocks})
		return
	}
	// user, tool, or an unknown role: all are the user's side.
	b.inUser = true
	for _, blk := range m.Content {
		switch blk.Type {
		case message.TypeToolResult:
			b.results = append(b.results, anToolResult{Type: "tool_result", ToolUseID: blk.ToolCallID,
				Content: blk.Content, IsError: blk.IsError})
		case message.TypeText:
			if blk.Text != "" {
				b.rest = append(b.rest, anText{Type: "text", Text: blk.Text})
			}
		case message.TypeImage:
			b.rest = append(b.rest, anImage{Type: "image",
				Source: anImageSource{Type: "base64", MediaType: blk.MimeType, Data: blk.Data}})
		}
	}
}

func (b *anBuilder) messages() []anMessage {
	b.flushUser()
	if b.out == nil {
		return []anMessage{}
	}
	return b.out
}

// anAssistantBlocks converts an assistant turn's blocks in order. Thinking
// without a signature, or carrying another wire's state (Origin), is
// dropped: it was not produced by this API (or was cut), and the API
// rejects thinking it cannot verify.
func anAssistantBlocks(in []message.Block) []any {
	var out []any
	for _, blk := range in {
		switch blk.Type {
		case message.TypeThinking:
			if blk.Signature != nil && *blk.Signature != "" && blk.Origin == "" {
				out = append(out, anThinkingBlock{Type: "thinking", Thinking: blk.Thinking, Signature: *blk.Signature})
			}
		case message.TypeRedactedThinking:
			if blk.Data != "" {
				out = append(out, anRedacted{Type: "redacted_thinking", Data: blk.Data})
			}
		case message.TypeText:
			if blk.Text != "" {
				out = append(out, anText{Type: "text", Text: blk.Text})
			}
		case message.TypeToolUse:
			out = append(out, anToolUse{Type: "tool_use", ID: blk.ID, Name: blk.Name, Input: anInput(blk.Arguments)})
		}
	}
	return out
}

// anInput is the tool_use input object: the arguments when they are a JSON
// object, else {} (the API requires an object; a model's broken arguments
// were already reported to it through the tool result).
func anInput(args string) json.RawMessage {
	raw := bytes.TrimSpace([]byte(args))
	if len(raw) == 0 || raw[0] != '{' || !json.Valid(raw) {
		return anEmptyInput
	}
	return raw
}
