// Package message is the conversation model shared by the providers, the agent
// loop and the session store: roles, content blocks and token usage, in the
// wire shapes of seed 000 (the shapes stored in history/<uuid>.jsonl).
package message

import (
	"encoding/json"
	"fmt"
)

// Role of a message's author.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
	RoleSystem    Role = "system"
)

// Block types.
const (
	TypeText             = "text"
	TypeThinking         = "thinking"
	TypeRedactedThinking = "redacted_thinking"
	TypeImage            = "image"
	TypeToolUse          = "tool_use"
	TypeToolResult       = "tool_result"
)

// RedactedThinkingNotice is what a redacted_thinking block shows where
// thinking is shown: its data is the provider's encrypted reasoning, opaque
// and never displayed.
const RedactedThinkingNotice = "[thinking redacted by the provider]"

// Message is one entry of a conversation.
type Message struct {
	Role    Role    `json:"role"`
	Content []Block `json:"content"`
	// Compaction marks a user message summarising everything before it:
	// turns send the history from the last such message on.
	Compaction bool `json:"compaction,omitempty"`
}

// Block is one content block. Which fields are meaningful depends on Type;
// MarshalJSON writes exactly the fields of that type (seed 000 ContentBlock).
type Block struct {
	Type string

	Text string // text

	Thinking string // thinking
	// Signature is a provider's opaque state for the block, sent back with
	// it: thinking (Anthropic signature, Gemini thoughtSignature, OpenAI
	// Responses encrypted reasoning), tool_use and text (Gemini
	// thoughtSignature on the part it came with).
	Signature *string
	// Origin names the wire whose opaque state a thinking block carries
	// when other wires must not send it back ("openai_responses": its
	// encrypted reasoning means nothing to Anthropic or Gemini, and theirs
	// nothing to it). Empty for blocks from the other wires, which predate
	// it.
	Origin string

	Data     string // redacted_thinking, image (base64)
	MimeType string // image
	// FileID names the uploaded file a text or image block was made from
	// (a sessions API session file), kept so the transcript can say so;
	// the providers never see it.
	FileID string

	ID        string // tool_use
	Name      string // tool_use
	Arguments string // tool_use: the arguments as a JSON string

	ToolCallID string // tool_result
	ToolName   string // tool_result
	Content    string // tool_result
	IsError    bool   // tool_result; omitted when false
}

// Text returns a text block.
func Text(s string) Block { return Block{Type: TypeText, Text: s} }

// ToolResult returns a tool_result block.
func ToolResult(callID, toolName, content string, isError bool) Block {
	return Block{Type: TypeToolResult, ToolCallID: callID, ToolName: toolName, Content: content, IsError: isError}
}

// MarshalJSON writes the fields of the block's type only.
func (b Block) MarshalJSON() ([]byte, error) {
	switch b.Type {
	case TypeText:
		return json.Marshal(struct {
			Type      string  `json:"type"`
			Text      string  `json:"text"`
			Signature *string `json:"signature,omitempty"`
			FileID    string  `json:"file_id,omitempty"`
		}{b.Type, b.Text, b.Signature, b.FileID})
	case TypeThinking:
		return json.Marshal(struct {
			Type      string  `json:"type"`
			Thinking  string  `json:"thinking"`
			Signature *string `json:"signature,omitempty"`
			Origin    string  `json:"origin,omitempty"`
		}{b.Type, b.Thinking, b.Signature, b.Origin})
	case TypeRedactedThinking:
		return json.Marshal(struct {
			Type string `json:"type"`
			Data string `json:"data"`
		}{b.Type, b.Data})
	case TypeImage:
		return json.Marshal(struct {
			Type     string `json:"type"`
			Data     string `json:"data"`
			MimeType string `json:"mime_type"`
			FileID   string `json:"file_id,omitempty"`
		}{b.Type, b.Data, b.MimeType, b.FileID})
	case TypeToolUse:
		return json.Marshal(struct {
			Type      string  `json:"type"`
			ID        string  `json:"id"`
			Name      string  `json:"name"`
			Arguments string  `json:"arguments"`
			Signature *string `json:"signature,omitempty"`
		}{b.Type, b.ID, b.Name, b.Arguments, b.Signature})
	case TypeToolResult:
		return json.Marshal(struct {
			Type       string `json:"type"`
			ToolCallID string `json:"tool_call_id"`
			ToolName   string `json:"tool_name"`
			Content    string `json:"content"`
			IsError    bool   `json:"is_error,omitempty"`
		}{b.Type, b.ToolCallID, b.ToolName, b.Content, b.IsError})
	}
	return nil, fmt.Errorf("message: unknown content block type %q", b.Type)
}

// UnmarshalJSON reads any block type and rejects unknown ones.
func (b *Block) UnmarshalJSON(data []byte) error {
	var w struct {
		Type       string  `json:"type"`
		Text       string  `json:"text"`
		Thinking   string  `json:"thinking"`
		Signature  *string `json:"signature"`
		Origin     string  `json:"origin"`
		Data       string  `json:"data"`
		MimeType   string  `json:"mime_type"`
		FileID     string  `json:"file_id"`
		ID         string  `json:"id"`
		Name       string  `json:"name"`
		Arguments  string  `json:"arguments"`
		ToolCallID string  `json:"tool_call_id"`
		ToolName   string  `json:"tool_name"`
		Content    string  `json:"content"`
		IsError    bool    `json:"is_error"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	switch w.Type {
	case TypeText, TypeThinking, TypeRedactedThinking, TypeImage, TypeToolUse, TypeToolResult:
	default:
		return fmt.Errorf("unknown content block type %q", w.Type)
	}
	*b = Block{Type: w.Type, Text: w.Text, Thinking: w.Thinking, Signature: w.Signature, Origin: w.Origin, Data: w.Data,
		MimeType: w.MimeType, FileID: w.FileID, ID: w.ID, Name: w.Name, Arguments: w.Arguments, ToolCallID: w.ToolCallID,
		ToolName: w.ToolName, Content: w.Content, IsError: w.IsError}
	return nil
}

// Usage is the token usage of one LLM call (seed 000 Usage).
type Usage struct {
	InputTokens         int64 `json:"input_tokens"`
	OutputTokens        int64 `json:"output_tokens"`
	CacheCreationTokens int64 `json:"cache_creation_tokens"`
	CacheReadTokens     int64 `json:"cache_read_tokens"`
	// ThoughtTokens are the output tokens spent thinking, when the model
	// (or an external agent) reports them; part of OutputTokens.
	ThoughtTokens int64 `json:"thought_tokens,omitempty"`
}

// Total is every token the call consumed or produced.
func (u Usage) Total() int64 {
	return u.InputTokens + u.OutputTokens + u.CacheCreationTokens + u.CacheReadTokens
}

// JoinText concatenates the text blocks of a message.
func (m Message) JoinText() string {
	var s string
	for _, b := range m.Content {
		if b.Type == TypeText {
			s += b.Text
		}
	}
	return s
}

// ToolUses returns the tool_use blocks of a message in order.
func (m Message) ToolUses() []Block {
	var out []Block
	for _, b := range m.Content {
		if b.Type == TypeToolUse {
			out = append(out, b)
		}
	}
	return out
}

// SinceCompaction returns msgs from the last compaction message on: what a
// turn sends once the history was summarised.
func SinceCompaction(msgs []Message) []Message {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Compaction {
			return msgs[i:]
		}
	}
	return msgs
}
