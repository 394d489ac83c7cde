package openai

import (
	"encoding/json"
	"strings"

	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/message"
)

// Wire shapes of the chat-completions request. Only what openheim sends is
// modelled; everything else is left to the server's defaults.

type oaRequest struct {
	Model               string           `json:"model"`
	Messages            []oaMessage      `json:"messages"`
	Stream              bool             `json:"stream"`
	StreamOptions       *oaStreamOptions `json:"stream_options,omitempty"`
	MaxTokens           int              `json:"max_tokens,omitempty"`
	MaxCompletionTokens int              `json:"max_completion_tokens,omitempty"`
	Tools               []oaTool         `json:"tools,omitempty"`
}

type oaStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type oaMessage struct {
	Role string `json:"role"`
	// Content is a string, a []oaPart, or nil (omitted) for an assistant
	// message that only calls tools.
	Content    any          `json:"content,omitempty"`
	ToolCalls  []oaToolCall `json:"tool_calls,omitempty"`
	ToolCallID string       `json:"tool_call_id,omitempty"`
}

type oaPart struct {
	Type     string      `json:"type"`
	Text     string      `json:"text,omitempty"`
	ImageURL *oaImageURL `json:"image_url,omitempty"`
}

type oaImageURL struct {
	URL string `json:"url"`
}

type oaToolCall struct {
	ID       string     `json:"id"`
	Type     string     `json:"type"`
	Function oaFunction `json:"function"`
}

type oaFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type oaTool struct {
	Type     string        `json:"type"`
	Function oaToolFuncDef `json:"function"`
}

type oaToolFuncDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// emptyObject stands in for a missing schema or argument string: servers
// reject an empty string where they expect a JSON object.
var emptyObject = json.RawMessage(`{}`)

// buildOARequest converts a Request into the wire request. maxTokens is the
// effective cap (0: let the server decide); completionTokens picks the field
// name, since OpenAI's reasoning models reject max_tokens while most
// compatible servers only know max_tokens.
func buildOARequest(req *llm.Request, maxTokens int, completionTokens, streamOptions bool) *oaRequest {
	// An empty conversation is still an array: servers reject "messages": null.
	out := &oaRequest{Model: req.Model, Stream: true, Messages: []oaMessage{}}
	if streamOptions {
		out.StreamOptions = &oaStreamOptions{IncludeUsage: true}
	}
	if completionTokens {
		out.MaxCompletionTokens = maxTokens
	} else {
		out.MaxTokens = maxTokens
	}
	if req.System != "" {
		out.Messages = append(out.Messages, oaMessage{Role: "system", Content: req.System})
	}
	for _, m := range req.Messages {
		out.Messages = appendOAMessages(out.Messages, m)
	}
	for _, t := range req.Tools {
		params := t.Parameters
		if len(params) == 0 {
			params = emptyObject
		}
		out.Tools = append(out.Tools, oaTool{Type: "function",
			Function: oaToolFuncDef{Name: t.Name, Description: t.Description, Parameters: params}})
	}
	return out
}

// appendOAMessages converts one message; it may become several wire messages
// because OpenAI wants one "tool" message per tool result.
func appendOAMessages(out []oaMessage, m message.Message) []oaMessage {
	var texts []string
	var parts []oaPart
	var calls []oaToolCall
	hasImage := false
	for _, b := range m.Content {
		switch b.Type {
		case message.TypeText:
			texts = append(texts, b.Text)
			parts = append(parts, oaPart{Type: "text", Text: b.Text})
		case message.TypeImage:
			hasImage = true
			parts = append(parts, oaPart{Type: "image_url",
				ImageURL: &oaImageURL{URL: "data:" + b.MimeType + ";base64," + b.Data}})
		case message.TypeToolUse:
			args := b.Arguments
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			calls = append(calls, oaToolCall{ID: b.ID, Type: "function",
				Function: oaFunction{Name: b.Name, Arguments: args}})
		case message.TypeToolResult:
			// Results must directly follow the assistant turn that called
			// them, whatever role the history filed them under.
			out = append(out, oaMessage{Role: "tool", ToolCallID: b.ToolCallID, Content: b.Content})
		}
		// Thinking and redacted thinking are provider-specific state that
		// chat completions has no field for; sending them as text would make
		// the model read its own hidden reasoning back as conversation.
	}

	role := string(m.Role)
	switch m.Role {
	case message.RoleTool:
		return out // only its tool_result blocks matter
	case message.RoleAssistant:
		msg := oaMessage{Role: role, ToolCalls: calls}
		if len(texts) > 0 || len(calls) == 0 {
			msg.Content = strings.Join(texts, "")
		}
		return append(out, msg)
	case "":
		role = string(message.RoleUser)
	}
	if len(parts) == 0 {
		return out
	}
	if hasImage {
		return append(out, oaMessage{Role: role, Content: parts})
	}
	return append(out, oaMessage{Role: role, Content: strings.Join(texts, "\n")})
}
