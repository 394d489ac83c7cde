package acp

import (
	"encoding/json"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/jsonstr"
)

// EncodeNotification renders session/update params. Text chunks, nearly
// every notification of a turn, are written directly: encoding/json's
// reflection and its re-validation of ContentBlock's MarshalJSON output
// were most of a busy server's cost per update. The bytes are exactly
// encoding/json's (a test holds them to it).
func EncodeNotification(n SessionNotification) (json.RawMessage, error) {
	u := n.Update
	if c := u.Content; c != nil && c.Type == "text" && plainChunk(u) && plainText(c) {
		b := make([]byte, 0, len(c.Text)+len(n.SessionID)+len(u.SessionUpdate)+80)
		b = append(b, `{"sessionId":`...)
		b = appendJSONString(b, n.SessionID)
		b = append(b, `,"update":{"sessionUpdate":`...)
		b = appendJSONString(b, u.SessionUpdate)
		b = append(b, `,"content":{"type":"text","text":`...)
		b = appendJSONString(b, c.Text)
		return append(b, "}}}"...), nil
	}
	return json.Marshal(n)
}

// EncodeInline renders seed 000's form of the params: the variant's
// fields beside sessionId, and thinking as an agent_message_chunk marked
// content._meta.kind = "thinking".
func EncodeInline(n SessionNotification) (json.RawMessage, error) {
	u := n.Update
	thinking := u.SessionUpdate == string(event.AgentThoughtChunk) && u.Content != nil
	if thinking {
		u.SessionUpdate = string(event.AgentMessageChunk)
	}
	if c := u.Content; c != nil && c.Type == "text" && plainChunk(u) && plainText(c) {
		b := make([]byte, 0, len(c.Text)+len(n.SessionID)+len(u.SessionUpdate)+100)
		b = append(b, `{"sessionId":`...)
		b = appendJSONString(b, n.SessionID)
		b = append(b, `,"sessionUpdate":`...)
		b = appendJSONString(b, u.SessionUpdate)
		b = append(b, `,"content":{"type":"text","text":`...)
		b = appendJSONString(b, c.Text)
		if thinking {
			b = append(b, `,"_meta":{"kind":"thinking"}`...)
		}
		return append(b, "}}"...), nil
	}
	if thinking {
		c := *u.Content
		c.Meta = map[string]any{"kind": "thinking"}
		u.Content = &c
	}
	return spliceSessionID(n.SessionID, u)
}

// spliceSessionID writes u's fields after a leading sessionId.
func spliceSessionID(sessionID string, u SessionUpdate) (json.RawMessage, error) {
	body, err := json.Marshal(u)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(body)+len(sessionID)+16)
	b = append(b, `{"sessionId":`...)
	b = appendJSONString(b, sessionID)
	b = append(b, ',')
	return append(b, body[1:]...), nil
}

// plainChunk: only sessionUpdate and content are set.
func plainChunk(u SessionUpdate) bool {
	return u.ToolCallID == "" && u.Title == nil && u.Kind == "" && u.Status == "" && u.RawInput == nil &&
		u.RawOutput == nil && u.Entries == nil && u.Used == nil && u.Size == nil && u.UpdatedAt == nil &&
		u.CurrentModeID == "" && u.Meta == nil && u.Cost == nil && u.ToolContent == nil && u.Locations == nil
}

// plainText: a text block with nothing but its text.
func plainText(c *ContentBlock) bool {
	return c.Data == "" && c.MimeType == "" && c.URI == "" && c.Name == "" && c.Resource == nil && c.Meta == nil
}

// appendJSONString appends s as encoding/json writes it by default: HTML
// characters and U+2028/U+2029 escaped, invalid UTF-8 as U+FFFD.
func appendJSONString(b []byte, s string) []byte { return jsonstr.Append(b, s, true) }

// appendJSONStringNoHTML is appendJSONString leaving <, > and & as they
// are (for a MarshalJSON, whose caller's encoder escapes them or not).
func appendJSONStringNoHTML(b []byte, s string) []byte { return jsonstr.Append(b, s, false) }
