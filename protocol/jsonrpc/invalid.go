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
