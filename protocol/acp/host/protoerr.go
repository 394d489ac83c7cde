package host

import (
	"encoding/json"
	"fmt"

	"github.com/openheim/openheim/protocol/acp"
)

// ProtocolError is a message of the agent's that did not decode, whole or
// in part (seed 002's ProtocolErrorEvent). Partial says the message was
// still used, without the fields Err names.
type ProtocolError struct {
	Method    string // session/update, session/request_permission, the result of session/prompt, ...
	SessionID string
	Err       error
	Partial   bool
	Raw       json.RawMessage // the message's params or result, at most maxProtocolRaw bytes
}

// maxProtocolRaw bounds the raw message a ProtocolError keeps.
const maxProtocolRaw = 4 << 10

// maxProtocolWarnings is how many protocol errors a host logs as warnings;
// the rest go to the debug log (and all to the hook and Stats), so a
// misbehaving agent cannot flood stderr.
const maxProtocolWarnings = 20

// protocolError reports a decode failure of the agent's message.
func (h *Host) protocolError(method, sessionID string, raw json.RawMessage, err error) {
	if len(raw) > maxProtocolRaw {
		raw = raw[:maxProtocolRaw]
	}
	h.hook(ProtocolError{Method: method, SessionID: sessionID, Err: err, Partial: acp.Partial(err), Raw: append(json.RawMessage(nil), raw...)})
}

// warnProtocol logs e: a warning while few have been, then debug.
func (h *Host) warnProtocol(e ProtocolError) {
	what := "was dropped"
	if e.Partial {
		what = "was used without some fields"
	}
	msg := fmt.Sprintf("acp agent %s sent a %s that did not decode and %s: %s", h.spec.Name, e.Method, what, acp.Summary(e.Err))
	n := h.warned.Add(1)
	switch {
	case n <= maxProtocolWarnings:
		h.log.Warn(msg, "session", e.SessionID)
	case n == maxProtocolWarnings+1:
		h.log.Warn(fmt.Sprintf("acp agent %s: more protocol errors; they are logged at debug level (OPENHEIM_LOG=debug)", h.spec.Name))
		fallthrough
	default:
		h.log.Debug(msg, "session", e.SessionID, "raw", string(e.Raw))
	}
}
