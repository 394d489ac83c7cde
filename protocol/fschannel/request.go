package fschannel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// request is one decoded FsRequest (seed 000). Which fields are set
// depends on the action.
type request struct {
	Action    string
	ID        json.RawMessage // as sent; nil when absent
	Path      string
	Content   string
	From, To  string
	Recursive bool
}

// actions lists the variants in declaration order, for the serde-style
// "unknown variant" message.
var actions = []string{"watch", "unwatch", "list", "read", "write", "mkdir", "delete", "rename"}

// required names the string fields each action must carry, in the order
// they are checked.
var required = map[string][]string{
	"watch":   {"path"},
	"unwatch": nil,
	"list":    {"path"},
	"read":    {"path"},
	"write":   {"path", "content"},
	"mkdir":   {"path"},
	"delete":  {"path"},
	"rename":  {"from", "to"},
}

// payloadError is a request that could not be decoded. Its message follows
// serde's wording (what the Rust server sent) without the line/column
// suffix, and is sent as "Invalid payload: " + msg.
type payloadError struct{ msg string }

func (e *payloadError) Error() string { return "Invalid payload: " + e.msg }

func invalid(format string, a ...any) *payloadError {
	return &payloadError{msg: fmt.Sprintf(format, a...)}
}

// parseRequest decodes raw. Even when it fails it returns the request's id
// if one could be read, so the error reply can echo it. Unknown fields are
// ignored, as serde does by default.
func parseRequest(raw json.RawMessage) (request, *payloadError) {
	var req request
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		return req, invalid("EOF while parsing a value")
	}
	if !json.Valid(trimmed) {
		var v any
		err := json.Unmarshal(trimmed, &v)
		return req, invalid("%v", err)
	}
	if trimmed[0] != '{' {
		return req, invalid("invalid type: %s, expected internally tagged enum FsRequest", unexpected(trimmed))
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &fields); err != nil {
		return req, invalid("%v", err)
	}
	if id, ok := fields["id"]; ok {
		req.ID = id
	}
	rawAction, ok := fields["action"]
	if !ok {
		return req, invalid("missing field `action`")
	}
	if err := json.Unmarshal(rawAction, &req.Action); err != nil || rawAction[0] != '"' {
		return req, invalid("invalid type: %s, expected variant identifier", unexpected(rawAction))
	}
	names, known := required[req.Action]
	if !known {
		return req, invalid("unknown variant `%s`, expected one of `%s`", req.Action, strings.Join(actions, "`, `"))
	}
	targets := map[string]*string{"path": &req.Path, "content": &req.Content, "from": &req.From, "to": &req.To}
	for _, name := range names {
		v, ok := fields[name]
		if !ok {
			return req, invalid("missing field `%s`", name)
		}
		if v[0] != '"' {
			return req, invalid("invalid type: %s, expected a string for field `%s`", unexpected(v), name)
		}
		if err := json.Unmarshal(v, targets[name]); err != nil {
			return req, invalid("field `%s`: %v", name, err)
		}
	}
	if req.Action == "list" {
		// recursive is an Option<bool>: absent and null both mean false.
		if v, ok := fields["recursive"]; ok && string(v) != "null" {
			if v[0] != 't' && v[0] != 'f' {
				return req, invalid("invalid type: %s, expected a boolean for field `recursive`", unexpected(v))
			}
			req.Recursive = v[0] == 't'
		}
	}
	return req, nil
}

// unexpected describes a JSON value the way serde's Unexpected does.
func unexpected(v json.RawMessage) string {
	switch c := v[0]; {
	case c == 'n':
		return "null"
	case c == 't' || c == 'f':
		return "boolean `" + string(v) + "`"
	case c == '"':
		return "string " + excerpt(string(v))
	case c == '[':
		return "sequence"
	case c == '{':
		return "map"
	case bytes.ContainsAny(v, ".eE"):
		return "floating point `" + string(v) + "`"
	default:
		return "integer `" + string(v) + "`"
	}
}

// excerpt keeps error messages short when a client sends a huge value
// where a small one was expected.
func excerpt(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && s[cut]&0xC0 == 0x80 { // do not split a UTF-8 sequence
		cut--
	}
	return s[:cut] + "…"
}
