package anthropic

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/llm/sse"
	"github.com/openheim/openheim/runtime/llm/transport"
	"github.com/openheim/openheim/runtime/message"
)

// Wire shape of one Messages stream event. One struct covers every event
// type: each fills only its own fields, and the rest stay zero.
type anEvent struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Message *struct {
		Usage *anUsage `json:"usage"`
	} `json:"message"`
	ContentBlock *struct {
		Type      string          `json:"type"`
		Text      string          `json:"text"`
		Thinking  string          `json:"thinking"`
		Signature string          `json:"signature"`
		Data      string          `json:"data"`
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
	} `json:"content_block"`
	// Delta is a content_block_delta's delta or a message_delta's delta.
	Delta *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		Signature   string `json:"signature"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *anUsage `json:"usage"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// anUsage fields are pointers: message_delta repeats only some of them, and
// an absent field must not reset what message_start said.
type anUsage struct {
	InputTokens              *int64 `json:"input_tokens"`
	OutputTokens             *int64 `json:"output_tokens"`
	CacheCreationInputTokens *int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int64 `json:"cache_read_input_tokens"`
}

// anBlockAcc is one content block being assembled.
type anBlockAcc struct {
	typ      string          // text, thinking, redacted_thinking, tool_use, or a type openheim ignores
	buf      strings.Builder // text, thinking, or the tool input JSON fragments
	sig      string          // thinking
	data     string          // redacted_thinking
	id, name string          // tool_use
	input    json.RawMessage // tool_use: the input of content_block_start
}

type anAccumulator struct {
	blocks  []*anBlockAcc
	byIndex map[int]*anBlockAcc
	stop    string
	usage   message.Usage
	events  int
	cap     *transport.AnswerCap
}

// decodeAnStream reads a Messages event stream until message_stop. It
// forwards text and thinking deltas as they arrive and returns the assembled
// response; an answer passing maxAnswer bytes (see transport.NewAnswerCap)
// ends there as max_tokens.
func decodeAnStream(body io.Reader, maxAnswer int, onDelta func(llm.Delta) error) (*llm.Response, error) {
	acc := &anAccumulator{byIndex: map[int]*anBlockAcc{}, cap: transport.NewAnswerCap(maxAnswer)}
	r := sse.NewReader(body)
	for {
		ev, err := r.Next()
		if err != nil {
			if acc.stop != "" && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)) {
				// message_delta carried the stop reason: only
				// message_stop follows it, so nothing is missing. The
				// vendor SDKs' recorded streams end so, and the SDKs
				// do not wait for message_stop either.
				return acc.response(), nil
			}
			return nil, transport.ReadFailure(err, acc.events, "event", "message_stop")
		}
		data := strings.TrimSpace(ev.Data)
		if data == "" || ev.Type == "ping" {
			continue
		}
		acc.events++
		var e anEvent
		if err := json.Unmarshal([]byte(data), &e); err != nil {
			return nil, transport.MalformedJSON(fmt.Sprintf("stream event %d (%s)", acc.events, ev.Type), err, data)
		}
		typ := ev.Type
		if typ == "" || typ == "message" {
			typ = e.Type
		}
		done, err := acc.add(typ, &e, onDelta)
		if errors.Is(err, transport.ErrAnswerCap) {
			return acc.cap.Capped(acc.response()), nil
		}
		if err != nil {
			return nil, err
		}
		if done {
			return acc.response(), nil
		}
	}
}

// add applies one event; done reports message_stop.
func (a *anAccumulator) add(typ string, e *anEvent, onDelta func(llm.Delta) error) (done bool, err error) {
	switch typ {
	case "message_start":
		if e.Message != nil {
			a.setUsage(e.Message.Usage)
		}
	case "content_block_start":
		if e.ContentBlock == nil {
			return false, nil
		}
		cb := e.ContentBlock
		if err := a.cap.Charge(len(cb.ID) + len(cb.Name) + len(cb.Signature) + len(cb.Data) + len(cb.Input)); err != nil {
			return false, err
		}
		b := a.start(e.Index, cb.Type)
		b.id, b.name, b.sig, b.data, b.input = cb.ID, cb.Name, cb.Signature, cb.Data, cb.Input
		// The API starts text and thinking empty; a gateway may not.
		switch cb.Type {
		case message.TypeText:
			return false, a.emit(b, llm.DeltaText, cb.Text, onDelta)
		case message.TypeThinking:
			return false, a.emit(b, llm.DeltaThinking, cb.Thinking, onDelta)
		case message.TypeRedactedThinking:
			// The model thought, encrypted: say so without the data,
			// which is kept to go back with the next request.
			if onDelta != nil && cb.Data != "" {
				return false, onDelta(llm.Delta{Kind: llm.DeltaThinking, Text: message.RedactedThinkingNotice})
			}
		case message.TypeToolUse:
			if onDelta != nil {
				return false, onDelta(llm.ToolCallDelta(a.callsBefore(b), cb.ID, cb.Name))
			}
		}
	case "content_block_delta":
		if e.Delta == nil {
			return false, nil
		}
		d := e.Delta
		switch d.Type {
		case "text_delta":
			return false, a.emit(a.block(e.Index, message.TypeText), llm.DeltaText, d.Text, onDelta)
		case "thinking_delta":
			return false, a.emit(a.block(e.Index, message.TypeThinking), llm.DeltaThinking, d.Thinking, onDelta)
		case "signature_delta":
			if err := a.cap.Charge(len(d.Signature)); err != nil {
				return false, err
			}
			a.block(e.Index, message.TypeThinking).sig += d.Signature
		case "input_json_delta":
			args, err := a.cap.Take(d.PartialJSON)
			a.block(e.Index, message.TypeToolUse).buf.WriteString(args)
			return false, err
		}
		// citations_delta and future delta types carry nothing openheim keeps.
	case "message_delta":
		if e.Delta != nil && e.Delta.StopReason != "" {
			a.stop = e.Delta.StopReason
		}
		a.setUsage(e.Usage)
	case "message_stop":
		return true, nil
	case "error":
		return false, anStreamError(e)
	}
	// content_block_stop, ping and unknown event types (the API may add
	// some) need nothing.
	return false, nil
}

// callsBefore is how many tool_use blocks come before b: its place among
// the reply's calls.
func (a *anAccumulator) callsBefore(b *anBlockAcc) int {
	n := 0
	for _, x := range a.blocks {
		if x == b {
			break
		}
		if x.typ == message.TypeToolUse {
			n++
		}
	}
	return n
}

// start begins a block at index. A start at an index already in use begins
// a new block too, so a sloppy server that omits indexes still works.
func (a *anAccumulator) start(index int, typ string) *anBlockAcc {
	b := &anBlockAcc{typ: typ}
	a.blocks = append(a.blocks, b)
	a.byIndex[index] = b
	return b
}

// block is the block a delta belongs to; a delta for a block that was never
// started starts one of the type the delta implies.
func (a *anAccumulator) block(index int, typ string) *anBlockAcc {
	if b := a.byIndex[index]; b != nil {
		return b
	}
	return a.start(index, typ)
}

func (a *anAccumulator) emit(b *anBlockAcc, kind llm.DeltaKind, s string, onDelta func(llm.Delta) error) error {
	return a.cap.Forward(&b.buf, kind, s, onDelta)
}

// setUsage keeps the latest value of each field: message_delta's counts are
// cumulative.
func (a *anAccumulator) setUsage(u *anUsage) {
	if u == nil {
		return
	}
	set := func(dst *int64, src *int64) {
		if src != nil {
			*dst = *src
		}
	}
	set(&a.usage.InputTokens, u.InputTokens)
	set(&a.usage.OutputTokens, u.OutputTokens)
	set(&a.usage.CacheCreationTokens, u.CacheCreationInputTokens)
	set(&a.usage.CacheReadTokens, u.CacheReadInputTokens)
}

func (a *anAccumulator) response() *llm.Response {
	resp := &llm.Response{Usage: a.usage}
	hasCalls := false
	for _, b := range a.blocks {
		switch b.typ {
		case message.TypeThinking:
			if b.buf.Len() == 0 && b.sig == "" {
				continue
			}
			blk := message.Block{Type: message.TypeThinking, Thinking: b.buf.String()}
			if b.sig != "" {
				sig := b.sig
				blk.Signature = &sig
			}
			resp.Content = append(resp.Content, blk)
		case message.TypeRedactedThinking:
			if b.data != "" {
				resp.Content = append(resp.Content, message.Block{Type: message.TypeRedactedThinking, Data: b.data})
			}
		case message.TypeText:
			if b.buf.Len() > 0 {
				resp.Content = append(resp.Content, message.Text(b.buf.String()))
			}
		case message.TypeToolUse:
			hasCalls = true
			args := b.buf.String()
			if strings.TrimSpace(args) == "" {
				// No fragments: the input came whole in content_block_start
				// (the API sends {} there, a gateway may send it all).
				args = string(anInput(string(b.input)))
			}
			id := b.id
			if id == "" {
				id = transport.NewCallID()
			}
			resp.Content = append(resp.Content, message.Block{Type: message.TypeToolUse, ID: id, Name: b.name, Arguments: args})
		}
	}
	resp.StopReason = anStopReason(a.stop, hasCalls)
	return resp
}

// anStopReason maps the API's stop_reason. An unknown or missing reason is
// tool_use when the reply called tools, so the loop still runs them.
func anStopReason(reason string, hasCalls bool) event.StopReason {
	switch reason {
	case "end_turn", "stop_sequence":
		return event.StopEndTurn
	case "tool_use":
		return llm.StopToolUse
	case "max_tokens", "model_context_window_exceeded":
		return event.StopMaxTokens
	case "refusal":
		return event.StopRefusal
	case "pause_turn":
		return llm.StopPauseTurn
	}
	if hasCalls {
		return llm.StopToolUse
	}
	return event.StopEndTurn
}

// anAPIError is an `event: error` sent mid-stream.
type anAPIError struct {
	typ, msg string
	status   *llm.StatusError // the HTTP answer the error stands for, when retryable
}

func (e *anAPIError) Error() string {
	return fmt.Sprintf("llm: server error in stream (%s): %s", e.typ, e.msg)
}

func (e *anAPIError) Unwrap() error {
	if e.status == nil {
		return nil
	}
	return e.status
}

// anStreamError turns an error event into an error. overloaded_error is the
// 529 the API would have answered before streaming, and is retried alike.
func anStreamError(e *anEvent) error {
	if e.Error == nil {
		return errors.New("llm: server error in stream")
	}
	err := &anAPIError{typ: e.Error.Type, msg: transport.Truncate(e.Error.Message, 300)}
	if err.typ == "" {
		err.typ = "error"
	}
	if e.Error.Type == "overloaded_error" {
		err.status = &llm.StatusError{Status: 529, Body: err.msg}
	}
	return err
}
