package host

import (
	"bytes"
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
	Err       error // redacted (Options.Redact)
	Partial   bool
	// Raw is the message's params or result as Options.CaptureContent
	// says: nil (none), its shape (metadata) or itself (full), redacted
	// and at most maxProtocolRaw bytes.
	Raw json.RawMessage
}

// What a ProtocolError keeps of the offending message (seed 002's
// ObservabilityOptions.CaptureContent; [acp_agents.X] capture_content).
// The default is its shape: enough to see which field of which update an
// agent got wrong, without the prompts, files and command output that
// agents' messages carry into logs and hooks.
const (
	CaptureNone     = "none"     // no message, only the method and the error
	CaptureMetadata = "metadata" // keys, identifiers (sessionUpdate, type, kind, ids...) and numbers; other strings as their length
	CaptureFull     = "full"     // the message as sent, secrets masked
)

// Captures are the values of Options.CaptureContent ("" is metadata).
var Captures = []string{CaptureNone, CaptureMetadata, CaptureFull}

// maxProtocolRaw bounds the raw message a ProtocolError keeps.
const maxProtocolRaw = 4 << 10

// maxProtocolWarnings is how many protocol errors a host logs as warnings;
// the rest go to the debug log (and all to the hook and Stats), so a
// misbehaving agent cannot flood stderr.
const maxProtocolWarnings = 20

// protocolError reports a decode failure of the agent's message.
func (h *Host) protocolError(method, sessionID string, raw json.RawMessage, err error) {
	h.hook(ProtocolError{Method: method, SessionID: sessionID, Err: h.opts.Redact.Error(err), Partial: acp.Partial(err),
		Raw: h.capture(raw)})
}

// capture is what a ProtocolError keeps of raw (see CaptureContent): a
// copy, taken out and masked before it is cut, so no cut can leave a
// secret's head.
func (h *Host) capture(raw json.RawMessage) json.RawMessage {
	var out []byte
	switch h.opts.CaptureContent {
	case CaptureNone:
		return nil
	case CaptureFull:
		out = bytes.Clone(raw)
	default:
		if len(raw) == 0 {
			return nil
		}
		out = shape(raw)
	}
	out = h.opts.Redact.Bytes(out)
	if len(out) > maxProtocolRaw {
		out = out[:maxProtocolRaw]
	}
	return out
}

// warnProtocol logs e: a warning while few have been, then debug; the
// captured message goes to the debug log only.
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
		if len(e.Raw) > 0 {
			h.log.Debug("acp host: the message that did not decode", "session", e.SessionID, "raw", string(e.Raw))
		}
	case n == maxProtocolWarnings+1:
		h.log.Warn(fmt.Sprintf("acp agent %s: more protocol errors; they are logged at debug level (OPENHEIM_LOG=debug)", h.spec.Name))
		fallthrough
	default:
		h.log.Debug(msg, "session", e.SessionID, "raw", string(e.Raw))
	}
}

// checkCapture refuses an unknown CaptureContent.
func checkCapture(c string) error {
	for _, ok := range Captures {
		if c == ok {
			return nil
		}
	}
	if c == "" {
		return nil
	}
	return fmt.Errorf("acp host: capture content %q is not one of none, metadata, full", c)
}
