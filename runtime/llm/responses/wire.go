package responses

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/message"
)

// Wire shapes of the request, as Codex sends them. Only what openheim sends
// is modelled; the rest is left to the server's defaults.

type request struct {
	Model           string     `json:"model"`
	Instructions    string     `json:"instructions,omitempty"`
	Input           []any      `json:"input"`
	Tools           []tool     `json:"tools,omitempty"`
	ToolChoice      string     `json:"tool_choice,omitempty"`
	Reasoning       *reasoning `json:"reasoning,omitempty"`
	Include         []string   `json:"include,omitempty"`
	MaxOutputTokens int        `json:"max_output_tokens,omitempty"`
	// Store false: the server keeps nothing, so every request carries the
	// whole conversation and no item is referenced by id.
	Store  bool `json:"store"`
	Stream bool `json:"stream"`
}

type reasoning struct {
	Summary string `json:"summary,omitempty"`
}

type tool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	// Strict false: the API's default is true, which rejects schemas that
	// do not list every property as required.
	Strict bool `json:"strict"`
}

type inputMessage struct {
	Type    string `json:"type"`
	Role    string `json:"role"`
	Content []any  `json:"content"`
}

type textPart struct {
	Type string `json:"type"` // input_text or output_text
	Text string `json:"text"`
}

type imagePart struct {
	Type     string `json:"type"` // input_image
	ImageURL string `json:"image_url"`
}

type functionCall struct {
	Type      string `json:"type"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type functionCallOutput struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	Output string `json:"output"`
}

// reasoningItem goes back without its id: with store false the server has
// no item of that id, and refuses a reference to one.
type reasoningItem struct {
	Type             string     `json:"type"`
	Summary          []textPart `json:"summary"`
	EncryptedContent string     `json:"encrypted_content"`
}

var emptyObject = json.RawMessage(`{}`)

// buildRequest converts a Request into the wire request. maxTokens is the
// effective cap (0: the server's); rs says whether to ask for reasoning.
func buildRequest(req *llm.Request, maxTokens int, rs bool) *request {
	out := &request{Model: req.Model, Instructions: req.System, Input: []any{}, MaxOutputTokens: maxTokens, Stream: true}
	if rs {
		out.Reasoning = &reasoning{Summary: "auto"}
		out.Include = []string{"reasoning.encrypted_content"}
	}
	for _, m := range req.Messages {
		out.Input = appendItems(out.Input, m)
	}
	for _, t := range req.Tools {
		params := t.Parameters
		if len(bytes.TrimSpace(params)) == 0 || string(bytes.TrimSpace(params)) == "null" {
			params = emptyObject
		}
		out.Tools = append(out.Tools, tool{Type: "function", Name: t.Name, Description: t.Description, Parameters: params})
	}
	if len(out.Tools) > 0 {
		out.ToolChoice = "auto"
	}
	return out
}

// appendItems converts one message into input items, in its blocks' order:
// text and images become a message item, tool calls function_call items,
// tool results function_call_output items, this wire's reasoning reasoning
// items. Thinking from other wires is left out: this API cannot read it.
func appendItems(out []any, m message.Message) []any {
	role := string(m.Role)
	switch m.Role {
	case message.RoleAssistant, message.RoleSystem:
	default:
		role = string(message.RoleUser) // user, tool and unknown roles
	}
	var parts []any
	flush := func() {
		if len(parts) > 0 {
			out = append(out, inputMessage{Type: "message", Role: role, Content: parts})
			parts = nil
		}
	}
	for _, b := range m.Content {
		switch b.Type {
		case message.TypeText:
			if b.Text == "" {
				continue
			}
			typ := "input_text"
			if role == string(message.RoleAssistant) {
				typ = "output_text"
			}
			parts = append(parts, textPart{Type: typ, Text: b.Text})
		case message.TypeImage:
			if role != string(message.RoleAssistant) {
				parts = append(parts, imagePart{Type: "input_image", ImageURL: "data:" + b.MimeType + ";base64," + b.Data})
			}
		case message.TypeThinking:
			if b.Origin == Origin && b.Signature != nil && *b.Signature != "" {
				flush()
				out = append(out, reasoningItemOf(b))
			}
		case message.TypeToolUse:
			flush()
			args := b.Arguments
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			out = append(out, functionCall{Type: "function_call", CallID: b.ID, Name: b.Name, Arguments: args})
		case message.TypeToolResult:
			flush()
			out = append(out, functionCallOutput{Type: "function_call_output", CallID: b.ToolCallID, Output: b.Content})
		}
	}
	flush()
	return out
}

func reasoningItemOf(b message.Block) reasoningItem {
	item := reasoningItem{Type: "reasoning", Summary: []textPart{}, EncryptedContent: *b.Signature}
	if b.Thinking != "" {
		item.Summary = append(item.Summary, textPart{Type: "summary_text", Text: b.Thinking})
	}
	return item
}
