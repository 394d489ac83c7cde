package event

import (
	"bytes"
	"encoding/json"
	"errors"
	"time"

	"github.com/openheim/openheim/runtime/message"
)

// The wire form of an event, for hubs that hand a turn's events to other
// processes (the replicas of a cluster): the event's fields under their
// Go names, those left empty omitted (an empty list arrives as none: every
// consumer reads them by length), with the turn's error as its message (an
// error value does not cross a process). Several events travel as one
// message, a batch: a JSON array of wire events (WireBatch).

type wireEvent struct {
	SessionID string
	Kind      Kind
	Content   *message.Block    `json:",omitempty"`
	Summary   bool              `json:",omitempty"`
	Tool      *ToolCallInfo     `json:",omitempty"`
	Usage     *ContextUsage     `json:",omitempty"`
	Info      *SessionInfo      `json:",omitempty"`
	Server    *MCPServerStatus  `json:",omitempty"`
	Plan      []PlanEntry       `json:",omitempty"`
	Count     int               `json:",omitempty"`
	End       *wireEnd          `json:",omitempty"`
	Messages  []message.Message `json:",omitempty"`
	Index     int               `json:",omitempty"`
	Retry     *RetryInfo        `json:",omitempty"`
	Child     *ChildSession     `json:",omitempty"`
}

// wireOut is wireEvent as encoded: its Content (which shadows the
// embedded one for encoding/json) is a *message.Block, or for a plain text
// block a *wireText, which encodes to the same JSON without the block's
// MarshalJSON (two allocations an event, on the hot path of a streaming
// reply).
type wireOut struct {
	wireEvent
	Content any `json:",omitempty"`
}

type wireText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type wireEnd struct {
	StopReason StopReason
	Usage      message.Usage
	Iterations int
	Duration   time.Duration
	Err        string `json:",omitempty"`
}

// set makes w e's wire form; text is where a plain text block's form is
// kept.
func (w *wireOut) set(e *Event, text *wireText) {
	*w = wireOut{wireEvent: wireEvent{SessionID: e.SessionID, Kind: e.Kind, Summary: e.Summary, Tool: e.Tool,
		Usage: e.Usage, Info: e.Info, Server: e.Server, Plan: e.Plan, Count: e.Count, Messages: e.Messages,
		Index: e.Index, Retry: e.Retry, Child: e.Child}}
	if c := e.Content; c != nil {
		if c.Type == message.TypeText && c.Signature == nil && c.FileID == "" {
			*text = wireText{Type: c.Type, Text: c.Text}
			w.Content = text
		} else {
			w.Content = c
		}
	}
	if e.End != nil {
		w.End = &wireEnd{StopReason: e.End.StopReason, Usage: e.End.Usage, Iterations: e.End.Iterations, Duration: e.End.Duration}
		if e.End.Err != nil {
			w.End.Err = e.End.Err.Error()
		}
	}
}

func (w *wireEvent) event() Event {
	e := Event{SessionID: w.SessionID, Kind: w.Kind, Content: w.Content, Summary: w.Summary, Tool: w.Tool,
		Usage: w.Usage, Info: w.Info, Server: w.Server, Plan: w.Plan, Count: w.Count, Messages: w.Messages,
		Index: w.Index, Retry: w.Retry, Child: w.Child}
	if e.Tool != nil {
		// An absent raw value is nil, as the turn had it, not JSON null.
		e.Tool.RawInput, e.Tool.RawOutput = nullToNil(e.Tool.RawInput), nullToNil(e.Tool.RawOutput)
	}
	if w.End != nil {
		e.End = &End{StopReason: w.End.StopReason, Usage: w.End.Usage, Iterations: w.End.Iterations, Duration: w.End.Duration}
		if w.End.Err != "" {
			e.End.Err = errors.New(w.End.Err)
		}
	}
	return e
}

// MarshalWire encodes e for another process.
func MarshalWire(e Event) ([]byte, error) {
	var w wireOut
	var text wireText
	w.set(&e, &text)
	return json.Marshal(&w)
}

// UnmarshalWire decodes what MarshalWire encoded; the turn's error comes
// back as an error with the same message.
func UnmarshalWire(data []byte) (Event, error) {
	var w wireEvent
	if err := json.Unmarshal(data, &w); err != nil {
		return Event{}, err
	}
	return w.event(), nil
}

// UnmarshalWireBatch appends to dst the events of one message: a batch
// (WireBatch) or a single event (MarshalWire).
func UnmarshalWireBatch(dst []Event, data []byte) ([]Event, error) {
	data = bytes.TrimLeft(data, " \t\r\n")
	if len(data) == 0 || data[0] != '[' {
		e, err := UnmarshalWire(data)
		if err != nil {
			return dst, err
		}
		return append(dst, e), nil
	}
	var ws []wireEvent
	if err := json.Unmarshal(data, &ws); err != nil {
		return dst, err
	}
	for i := range ws {
		dst = append(dst, ws[i].event())
	}
	return dst, nil
}

// ErrWireTooLarge refuses an event whose wire form alone is larger than a
// message may be.
var ErrWireTooLarge = errors.New("event too large for one message")

// WireBatch builds the messages that carry a run of events: each a JSON
// array of wire events, at most Max bytes. Its buffers are reused from one
// message to the next, so a steady stream encodes without allocating; it
// is not safe for concurrent use.
type WireBatch struct {
	// Max bounds a message in bytes (0: no bound).
	Max int

	buf  bytes.Buffer // the message being built, without its closing ']'
	n    int          // events in it
	one  bytes.Buffer // the event being added
	enc  *json.Encoder
	w    wireOut
	text wireText
}

// Add appends e's wire form to the message being built. When e would take
// it past Max, the message so far is handed to send first. An event whose
// form alone is past Max is not added (ErrWireTooLarge).
func (b *WireBatch) Add(e *Event, send func([]byte)) error {
	if b.enc == nil {
		b.enc = json.NewEncoder(&b.one)
	}
	b.one.Reset()
	b.w.set(e, &b.text)
	err := b.enc.Encode(&b.w)
	b.w, b.text = wireOut{}, wireText{} // keep no reference to the event's content
	if err != nil {
		return err
	}
	form := bytes.TrimRight(b.one.Bytes(), "\n")
	if b.Max > 0 && len(form)+2 > b.Max {
		return ErrWireTooLarge
	}
	if b.Max > 0 && b.n > 0 && b.buf.Len()+1+len(form)+1 > b.Max {
		b.Flush(send)
	}
	if b.n == 0 {
		b.buf.WriteByte('[')
	} else {
		b.buf.WriteByte(',')
	}
	b.buf.Write(form)
	b.n++
	return nil
}

// Len is how many events the message being built holds.
func (b *WireBatch) Len() int { return b.n }

// Flush hands the message being built, if it holds any event, to send
// (which must not keep it) and starts the next.
func (b *WireBatch) Flush(send func([]byte)) {
	if b.n == 0 {
		return
	}
	b.buf.WriteByte(']')
	send(b.buf.Bytes())
	b.buf.Reset()
	b.n = 0
	if b.buf.Cap() > keepBuffer { // a rare large message does not stay held
		b.buf = bytes.Buffer{}
	}
	if b.one.Cap() > keepBuffer {
		b.one = bytes.Buffer{}
		b.enc = nil
	}
}

// keepBuffer is the largest buffer a WireBatch keeps between messages.
const keepBuffer = 64 << 10

func nullToNil(r json.RawMessage) json.RawMessage {
	if string(r) == "null" {
		return nil
	}
	return r
}
