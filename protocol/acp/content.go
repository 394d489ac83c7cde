package acp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Tool-call content types (ACP ToolCallContent).
const (
	ToolContentBlock    = "content"
	ToolContentDiff     = "diff"
	ToolContentTerminal = "terminal"
)

// ToolCallContent is one item of a tool call's content: a content block
// (Type "content", Content set), a change to a file (Type "diff": Path,
// OldText nil for a new file, NewText) or a terminal the client runs (Type
// "terminal", TerminalID).
type ToolCallContent struct {
	Type       string
	Content    *ContentBlock
	Path       string
	OldText    *string
	NewText    string
	TerminalID string
	Meta       map[string]any
}

type contentWire struct {
	Type    string         `json:"type"`
	Content *ContentBlock  `json:"content,omitempty"`
	Meta    map[string]any `json:"_meta,omitempty"`
}

type diffWire struct {
	Type    string         `json:"type"`
	Path    string         `json:"path"`
	OldText *string        `json:"oldText"`
	NewText string         `json:"newText"`
	Meta    map[string]any `json:"_meta,omitempty"`
}

type terminalWire struct {
	Type       string         `json:"type"`
	TerminalID string         `json:"terminalId"`
	Meta       map[string]any `json:"_meta,omitempty"`
}

// MarshalJSON writes the fields of the item's type only; a diff always
// has oldText (null for a new file) and newText.
func (c ToolCallContent) MarshalJSON() ([]byte, error) {
	switch c.Type {
	case ToolContentDiff:
		return marshalNoHTML(diffWire{c.Type, c.Path, c.OldText, c.NewText, c.Meta})
	case ToolContentTerminal:
		return marshalNoHTML(terminalWire{c.Type, c.TerminalID, c.Meta})
	}
	return marshalNoHTML(contentWire{c.Type, c.Content, c.Meta})
}

// UnmarshalJSON decodes one item; an unknown type is an error (the list
// it is in keeps the others, see decodeToolContent).
func (c *ToolCallContent) UnmarshalJSON(data []byte) error {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return err
	}
	*c = ToolCallContent{Type: head.Type}
	switch head.Type {
	case ToolContentBlock:
		var w contentWire
		err := DecodeLenient(data, &w)
		c.Content, c.Meta = w.Content, w.Meta
		if c.Content == nil {
			return errors.New(`a "content" item without its content block`)
		}
		return err
	case ToolContentDiff:
		var w diffWire
		err := DecodeLenient(data, &w)
		c.Path, c.OldText, c.NewText, c.Meta = w.Path, w.OldText, w.NewText, w.Meta
		return err
	case ToolContentTerminal:
		var w terminalWire
		err := DecodeLenient(data, &w)
		c.TerminalID, c.Meta = w.TerminalID, w.Meta
		return err
	}
	return fmt.Errorf("unknown tool call content type %q", head.Type)
}

// ToolCallLocation is a file a tool call touches (ACP ToolCallLocation);
// Line is 1-based.
type ToolCallLocation struct {
	Path string         `json:"path"`
	Line *int           `json:"line,omitempty"`
	Meta map[string]any `json:"_meta,omitempty"`
}

// Cost is what a turn has cost so far (usage_update's cost).
type Cost struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
}

// isList reports whether raw is a JSON array.
func isList(raw json.RawMessage) bool {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	return len(raw) > 0 && raw[0] == '['
}

// decodeToolContent decodes a tool call's content: a list (ACP), or one
// item (seed 002's ContentBlocks accept both). Items that do not decode are
// left out and reported; the others are kept. null is no content.
func decodeToolContent(raw json.RawMessage, de **DecodeError) []ToolCallContent {
	if string(bytes.TrimSpace(raw)) == "null" {
		return nil
	}
	var items []json.RawMessage
	if isList(raw) {
		if err := json.Unmarshal(raw, &items); err != nil {
			addField(de, "content", err)
			return nil
		}
	} else {
		items = []json.RawMessage{raw}
	}
	out := make([]ToolCallContent, 0, len(items))
	for i, item := range items {
		var c ToolCallContent
		err := c.UnmarshalJSON(item)
		if err != nil {
			addField(de, fmt.Sprintf("content[%d]", i), err)
		}
		if err == nil || Partial(err) {
			out = append(out, c)
		}
	}
	return out
}

// decodeChunkContent decodes a message chunk's content: one block (ACP), or
// a list of blocks (seed 002), whose texts are joined into one text block
// (a list without text gives its first block).
func decodeChunkContent(raw json.RawMessage, de **DecodeError) *ContentBlock {
	if string(bytes.TrimSpace(raw)) == "null" {
		return nil
	}
	if !isList(raw) {
		var b ContentBlock
		if err := DecodeLenient(raw, &b); err != nil {
			addField(de, "content", err)
			if !Partial(err) {
				return nil
			}
		}
		return &b
	}
	var blocks []ContentBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		addField(de, "content", err)
		return nil
	}
	if len(blocks) == 0 {
		return nil
	}
	var text bytes.Buffer
	texts := 0
	for _, b := range blocks {
		if b.Type == "text" {
			text.WriteString(b.Text)
			texts++
		}
	}
	if texts == 0 {
		return &blocks[0]
	}
	return &ContentBlock{Type: "text", Text: text.String()}
}

// decodeLocations decodes locations, keeping every entry that decodes.
func decodeLocations(raw json.RawMessage, de **DecodeError) []ToolCallLocation {
	if string(bytes.TrimSpace(raw)) == "null" {
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		addField(de, "locations", err)
		return nil
	}
	out := make([]ToolCallLocation, 0, len(items))
	for i, item := range items {
		var l ToolCallLocation
		if err := DecodeLenient(item, &l); err != nil {
			addField(de, fmt.Sprintf("locations[%d]", i), err)
			if !Partial(err) {
				continue
			}
		}
		out = append(out, l)
	}
	return out
}

// Update is the tool call a permission request is about as a tool_call
// update (title, kind, status, arguments, content, locations), for a host
// that had not heard of the call before the agent asked about it. Content
// and locations decode leniently; the error names what was left out.
func (tc PermissionToolCall) Update() (SessionUpdate, error) {
	u := SessionUpdate{SessionUpdate: "tool_call", ToolCallID: tc.ToolCallID, Kind: tc.Kind, Status: tc.Status,
		RawInput: tc.RawInput, Meta: tc.Meta}
	if tc.Title != "" {
		title := tc.Title
		u.Title = &title
	}
	var de *DecodeError
	if len(tc.Content) > 0 {
		u.ToolContent = decodeToolContent(tc.Content, &de)
	}
	if len(tc.Locations) > 0 {
		u.Locations = decodeLocations(tc.Locations, &de)
	}
	return u, de.asError()
}
