// Package acp holds the ACP v1 wire types, their encoding, and the mapping
// between openheim's one event stream and session/update notifications
// (both ways). It knows neither side of a connection: acp/agent is
// openheim as an agent, acp/host is openheim driving external agents.
package acp

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/message"
)

// ContentBlock is an ACP content block.
type ContentBlock struct {
	Type     string          `json:"type"`
	Text     string          `json:"text,omitempty"`
	Data     string          `json:"data,omitempty"`
	MimeType string          `json:"mimeType,omitempty"`
	URI      string          `json:"uri,omitempty"`
	Name     string          `json:"name,omitempty"`
	Resource json.RawMessage `json:"resource,omitempty"` // embedded resource blocks
	Meta     map[string]any  `json:"_meta,omitempty"`
}

// PlanEntry is one entry of a plan update.
type PlanEntry struct {
	Content  string `json:"content"`
	Priority string `json:"priority"`
	Status   string `json:"status"`
}

// SessionUpdate is the `update` of a session/update notification: the
// variant named by SessionUpdate with its fields. Message chunks carry
// Content, tool calls ToolContent (both are "content" on the wire: one
// block, a list of tool call content); an update decodes leniently
// (DecodeUpdate).
type SessionUpdate struct {
	SessionUpdate string          `json:"sessionUpdate"`
	Content       *ContentBlock   `json:"content,omitempty"`
	ToolCallID    string          `json:"toolCallId,omitempty"`
	Title         *string         `json:"title,omitempty"`
	Kind          string          `json:"kind,omitempty"`
	Status        string          `json:"status,omitempty"`
	RawInput      json.RawMessage `json:"rawInput,omitempty"`
	RawOutput     json.RawMessage `json:"rawOutput,omitempty"`
	Entries       []PlanEntry     `json:"entries,omitempty"`
	Used          *int64          `json:"used,omitempty"`
	Size          *int64          `json:"size,omitempty"`
	Cost          *Cost           `json:"cost,omitempty"`
	UpdatedAt     *string         `json:"updatedAt,omitempty"`
	CurrentModeID string          `json:"currentModeId,omitempty"`
	Meta          map[string]any  `json:"_meta,omitempty"`
	// ToolContent is a tool call's content; in a tool_call_update, nil
	// leaves it as it was and an empty list clears it (written as []).
	ToolContent []ToolCallContent `json:"-"`
	// Locations are the files a tool call touches; nil and empty as for
	// ToolContent.
	Locations []ToolCallLocation `json:"-"`
}

// SessionNotification is the params of session/update (canonical ACP v1).
type SessionNotification struct {
	SessionID string        `json:"sessionId"`
	Update    SessionUpdate `json:"update"`
}

// Usage is ACP's token usage of a prompt turn.
type Usage struct {
	TotalTokens       int64  `json:"totalTokens"`
	InputTokens       int64  `json:"inputTokens"`
	OutputTokens      int64  `json:"outputTokens"`
	ThoughtTokens     *int64 `json:"thoughtTokens,omitempty"`
	CachedReadTokens  *int64 `json:"cachedReadTokens,omitempty"`
	CachedWriteTokens *int64 `json:"cachedWriteTokens,omitempty"`
}

// UsageFrom converts openheim's usage to ACP's.
func UsageFrom(u message.Usage) Usage {
	out := Usage{TotalTokens: u.Total(), InputTokens: u.InputTokens, OutputTokens: u.OutputTokens}
	if u.CacheReadTokens > 0 {
		out.CachedReadTokens = &u.CacheReadTokens
	}
	if u.CacheCreationTokens > 0 {
		out.CachedWriteTokens = &u.CacheCreationTokens
	}
	if u.ThoughtTokens > 0 {
		out.ThoughtTokens = &u.ThoughtTokens
	}
	return out
}

// Timestamp formats t as ACP expects (RFC 3339, UTC).
func Timestamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// UpdateFromEvent maps an event onto its canonical session/update. ok is
// false for events that are not session updates (the turn's end).
func UpdateFromEvent(e event.Event) (u SessionUpdate, ok bool) {
	switch e.Kind {
	case event.AgentMessageChunk, event.AgentThoughtChunk, event.UserMessageChunk:
		return SessionUpdate{SessionUpdate: string(e.Kind), Content: contentFrom(e.Content)}, true
	case event.ToolCall, event.ToolCallUpdate:
		return toolUpdate(e.Kind, e.Tool), true
	case event.Plan:
		entries := make([]PlanEntry, len(e.Plan))
		for i, p := range e.Plan {
			entries[i] = PlanEntry{Content: p.Content, Priority: p.Priority, Status: p.Status}
		}
		return SessionUpdate{SessionUpdate: string(e.Kind), Entries: entries}, true
	case event.UsageUpdate:
		used, size := e.Usage.Used, e.Usage.Size
		u := SessionUpdate{SessionUpdate: string(e.Kind), Used: &used, Size: &size}
		if c := e.Usage.Cost; c != nil {
			u.Cost = &Cost{Amount: c.Amount, Currency: c.Currency}
		}
		return u, true
	case event.SessionInfoUpdate:
		u := SessionUpdate{SessionUpdate: string(e.Kind)}
		if e.Info != nil {
			if e.Info.Title != "" {
				title := e.Info.Title
				u.Title = &title
			}
			if !e.Info.UpdatedAt.IsZero() {
				ts := Timestamp(e.Info.UpdatedAt)
				u.UpdatedAt = &ts
			}
		}
		return u, true
	case event.Dropped:
		// ACP has no variant for a loss; an info update with _meta keeps
		// strict clients happy while telling the reader what happened.
		return SessionUpdate{SessionUpdate: string(event.SessionInfoUpdate),
			Meta: map[string]any{"openheim": map[string]any{"droppedEvents": e.Count}}}, true
	case event.MCPServerFailed:
		// Nor for an MCP server's status: the same kind of info update,
		// carrying seed 000's McpServerStatus.
		if e.Server == nil {
			return SessionUpdate{}, false
		}
		return SessionUpdate{SessionUpdate: string(event.SessionInfoUpdate),
			Meta: map[string]any{"openheim": map[string]any{"mcpServerFailed": e.Server}}}, true
	}
	return SessionUpdate{}, false
}

func contentFrom(b *message.Block) *ContentBlock {
	if b == nil {
		return &ContentBlock{Type: "text"}
	}
	switch b.Type {
	case message.TypeImage:
		return &ContentBlock{Type: "image", Data: b.Data, MimeType: b.MimeType}
	case message.TypeThinking:
		return &ContentBlock{Type: "text", Text: b.Thinking}
	}
	return &ContentBlock{Type: "text", Text: b.Text}
}

// MarshalJSON always writes `text` on text blocks (ACP requires it, even
// empty) and omits it on the others.
func (c ContentBlock) MarshalJSON() ([]byte, error) {
	type plain ContentBlock
	if c.Type != "text" {
		return marshalNoHTML(plain(c))
	}
	return marshalNoHTML(struct {
		Type string         `json:"type"`
		Text string         `json:"text"`
		Meta map[string]any `json:"_meta,omitempty"`
	}{c.Type, c.Text, c.Meta})
}

// EventFromUpdate maps an agent's session/update onto openheim's event
// stream; ok is false for kinds openheim does not show (and unknown ones,
// which agents are free to add).
func EventFromUpdate(sessionID string, u SessionUpdate) (event.Event, bool) {
	ev := event.Event{SessionID: sessionID, Kind: event.Kind(u.SessionUpdate)}
	switch ev.Kind {
	case event.AgentMessageChunk, event.AgentThoughtChunk, event.UserMessageChunk:
		if u.Content == nil {
			return ev, false
		}
		b := blockFrom(*u.Content)
		ev.Content = &b
	case event.ToolCall, event.ToolCallUpdate:
		ev.Tool = toolInfo(ev.Kind, u)
	case event.Plan:
		for _, p := range u.Entries {
			ev.Plan = append(ev.Plan, event.PlanEntry{Content: p.Content, Status: p.Status, Priority: p.Priority})
		}
	case event.UsageUpdate:
		if u.Used == nil {
			return ev, false
		}
		ev.Usage = &event.ContextUsage{Used: *u.Used}
		if u.Size != nil {
			ev.Usage.Size = *u.Size
		}
		if u.Cost != nil {
			ev.Usage.Cost = &event.Cost{Amount: u.Cost.Amount, Currency: u.Cost.Currency}
		}
	case event.SessionInfoUpdate:
		ev.Info = &event.SessionInfo{}
		if u.Title != nil {
			ev.Info.Title = *u.Title
		}
		if u.UpdatedAt != nil {
			ev.Info.UpdatedAt, _ = time.Parse(time.RFC3339Nano, *u.UpdatedAt)
		}
	default:
		return ev, false
	}
	return ev, true
}

// blockFrom turns ACP content into a message block: text and images as
// such, anything else as its text or a reference.
func blockFrom(c ContentBlock) message.Block {
	switch c.Type {
	case "image":
		return message.Block{Type: message.TypeImage, Data: c.Data, MimeType: c.MimeType}
	case "resource_link":
		return message.Text(fmt.Sprintf("[%s <%s>]", c.Name, c.URI))
	case "resource":
		var r struct{ Text, URI string }
		json.Unmarshal(c.Resource, &r)
		if r.Text != "" {
			return message.Text(r.Text)
		}
		return message.Text("<" + r.URI + ">")
	}
	return message.Text(c.Text)
}

// PromptBlocks turns a user message into ACP prompt content.
func PromptBlocks(blocks []message.Block) []ContentBlock {
	var out []ContentBlock
	for _, b := range blocks {
		switch b.Type {
		case message.TypeText:
			out = append(out, ContentBlock{Type: "text", Text: b.Text})
		case message.TypeImage:
			out = append(out, ContentBlock{Type: "image", Data: b.Data, MimeType: b.MimeType})
		}
	}
	return out
}
