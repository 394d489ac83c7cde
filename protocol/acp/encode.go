package acp

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/openheim/openheim/runtime/event"
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

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as encoding/json writes it by default: HTML
// characters and U+2028/U+2029 escaped, invalid UTF-8 as U+FFFD.
func appendJSONString(b []byte, s string) []byte { return appendString(b, s, true) }

// appendJSONStringNoHTML is appendJSONString leaving <, > and & as they
// are (for a MarshalJSON, whose caller's encoder escapes them or not).
func appendJSONStringNoHTML(b []byte, s string) []byte { return appendString(b, s, false) }

func appendString(b []byte, s string, html bool) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (!html || (c != '<' && c != '>' && c != '&')) {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
