package acp

import (
	"bytes"
	"encoding/json"
	"strings"
)

// plainUpdate is SessionUpdate without its methods.
type plainUpdate SessionUpdate

// updateWire is SessionUpdate as it is on the wire: content (one block or
// a list of tool call content) and locations kept raw, to be read by kind.
type updateWire struct {
	plainUpdate
	Content   json.RawMessage `json:"content,omitempty"`
	Locations json.RawMessage `json:"locations,omitempty"`
}

// MarshalJSON writes the update; a tool call's content and locations are
// written as lists ([] when empty but set). Text chunks, most updates, are
// written directly (see EncodeNotification). Nothing is HTML-escaped here:
// the calling encoder does it or not (marshalNoHTML).
func (u SessionUpdate) MarshalJSON() ([]byte, error) {
	if c := u.Content; c != nil && c.Type == "text" && plainChunk(u) && plainText(c) {
		b := make([]byte, 0, len(c.Text)+len(u.SessionUpdate)+64)
		b = append(b, `{"sessionUpdate":`...)
		b = appendJSONStringNoHTML(b, u.SessionUpdate)
		b = append(b, `,"content":{"type":"text","text":`...)
		b = appendJSONStringNoHTML(b, c.Text)
		return append(b, "}}"...), nil
	}
	w := updateWire{plainUpdate: plainUpdate(u)}
	var err error
	switch {
	case u.Content != nil:
		w.Content, err = marshalNoHTML(u.Content)
	case u.ToolContent != nil:
		w.Content, err = marshalNoHTML(u.ToolContent)
	}
	if err == nil && u.Locations != nil {
		w.Locations, err = marshalNoHTML(u.Locations)
	}
	if err != nil {
		return nil, err
	}
	return marshalNoHTML(w)
}

// marshalNoHTML is json.Marshal without escaping <, > and &: a type's
// MarshalJSON must leave that to the encoder that calls it (encoding/json
// escapes its output when it is set to, and `prompt --json` is not, so that
// file and tool text stay readable).
func marshalNoHTML(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// UnmarshalJSON decodes the update leniently: fields that do not decode
// are left out (DecodeUpdate reports them); only data that is not an
// object fails.
func (u *SessionUpdate) UnmarshalJSON(data []byte) error {
	var err error
	*u, err = DecodeUpdate(data)
	if Partial(err) {
		return nil
	}
	return err
}

// DecodeUpdate decodes a session/update's `update`. Every field is decoded
// on its own terms: a field (or an item of a list) that does not decode is
// left out and named in the returned *DecodeError, and the rest of the
// update is returned with it. Only data that is not a JSON object fails
// as a whole. content is read by kind: a block for message chunks (a list
// of blocks is joined), tool call content for tool calls (one item or a
// list).
func DecodeUpdate(data []byte) (SessionUpdate, error) {
	// Most updates are chunks whose content is one block: one strict pass
	// into the plain type decodes them (a tool call's content list fails
	// it, and goes the longer way at once).
	if !bytes.Contains(data, []byte(`"tool_call`)) {
		var p plainUpdate
		if json.Unmarshal(data, &p) == nil {
			return SessionUpdate(p), nil
		}
	}
	var w updateWire
	var de *DecodeError
	if err := DecodeLenient(data, &w); err != nil {
		if !Partial(err) {
			return SessionUpdate{}, err
		}
		de = err.(*DecodeError)
	}
	u := SessionUpdate(w.plainUpdate)
	if len(w.Content) > 0 {
		if isToolUpdate(u.SessionUpdate) {
			u.ToolContent = decodeToolContent(w.Content, &de)
		} else {
			u.Content = decodeChunkContent(w.Content, &de)
		}
	}
	if len(w.Locations) > 0 {
		u.Locations = decodeLocations(w.Locations, &de)
	}
	return u, de.asError()
}

func isToolUpdate(kind string) bool {
	return kind == "tool_call" || kind == "tool_call_update"
}

// Summary is a short description of a decode error for a log line: the
// fields left out, each error cut to a readable length.
func Summary(err error) string {
	s := err.Error()
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return strings.ReplaceAll(s, "\n", " ")
}
