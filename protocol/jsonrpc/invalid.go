package jsonrpc

import "encoding/json"

// WithInvalid has bad called with every message from the other side that
// is not valid JSON-RPC (it is also answered with the error, as the spec
// says) and every response to an id no call of this peer's has: a host
// reports them rather than dropping them unseen. raw is the message (nil
// when only its id is known); bad runs in the read loop and must be quick.
func WithInvalid(bad func(raw json.RawMessage, err error)) Option {
	return func(p *Peer) { p.bad = bad }
}

// invalid reports a message that is not valid JSON-RPC and answers it.
func (p *Peer) invalid(raw, id json.RawMessage, e *Error) {
	if p.bad != nil {
		p.bad(raw, e)
	}
	p.sendError(id, e)
}

func validID(id json.RawMessage) bool {
	if len(id) == 0 {
		return false
	}
	switch c := id[0]; {
	case c == '"', c == '-', c >= '0' && c <= '9':
		return true
	}
	return string(id) == "null"
}

func validVersion(v json.RawMessage) bool {
	var s string
	return len(v) > 0 && v[0] == '"' && json.Unmarshal(v, &s) == nil && s == "2.0"
}
