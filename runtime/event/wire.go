package event

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/openheim/openheim/runtime/message"
)

// The wire form of an event, for hubs that hand a turn's events to other
// processes (the replicas of a cluster): the event as it is, with the
// turn's error as its message (an error value does not cross a process).

type wireEvent struct {
	Event
	End *wireEnd `json:"End,omitempty"`
}

type wireEnd struct {
	StopReason StopReason
	Usage      message.Usage
	Iterations int
	Duration   time.Duration
	Err        string `json:",omitempty"`
}

// MarshalWire encodes e for another process.
func MarshalWire(e Event) ([]byte, error) {
	w := wireEvent{Event: e}
	w.Event.End = nil
	if e.End != nil {
		w.End = &wireEnd{StopReason: e.End.StopReason, Usage: e.End.Usage, Iterations: e.End.Iterations, Duration: e.End.Duration}
		if e.End.Err != nil {
			w.End.Err = e.End.Err.Error()
		}
	}
	return json.Marshal(w)
}

// UnmarshalWire decodes what MarshalWire encoded; the turn's error comes
// back as an error with the same message.
func UnmarshalWire(data []byte) (Event, error) {
	var w wireEvent
	if err := json.Unmarshal(data, &w); err != nil {
		return Event{}, err
	}
	e := w.Event
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
	return e, nil
}

func nullToNil(r json.RawMessage) json.RawMessage {
	if string(r) == "null" {
		return nil
	}
	return r
}
