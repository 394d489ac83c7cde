package gemini

import (
	"bytes"
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

// gmAccumulator assembles the Response from streamed events.
type gmAccumulator struct {
	thinking strings.Builder
	thinkSig string
	text     strings.Builder
	textSig  string
	// other is what the server wrote outside the event-stream format
	// (sse.Reader.Other), such as a raw JSON error object.
	other   []byte
	calls   []message.Block
	finish  string
	blocked string
	usage   *gmUsage
	events  int
	cap     *transport.AnswerCap
}

// decodeGMStream reads events until the stream ends. Gemini sends no end
// marker: the stream is complete only if some event carried a finishReason
// (or a prompt blockReason) and the body then ended cleanly. An answer
// passing maxAnswer bytes (see transport.NewAnswerCap) ends there as
// max_tokens.
func decodeGMStream(body io.Reader, maxAnswer int, onDelta func(llm.Delta) error) (*llm.Response, error) {
	acc := &gmAccumulator{cap: transport.NewAnswerCap(maxAnswer)}
	r := sse.NewReader(body)
	r.Other = acc.keepOther
	for {
		ev, err := r.Next()
		// A raw error wins over a clean end and over a cut.
		if oerr := acc.otherError(errors.Is(err, io.EOF)); oerr != nil {
			return nil, oerr
		}
		if err != nil {
			if errors.Is(err, io.EOF) && (acc.finish != "" || acc.blocked != "") {
				return acc.response(), nil
			}
			return nil, transport.ReadFailure(err, acc.events, "event", "finishReason")
		}
		data := strings.TrimSpace(ev.Data)
		if data == "" {
			continue
		}
		acc.events++
		if err := acc.add([]byte(data), onDelta); err != nil {
			if errors.Is(err, transport.ErrAnswerCap) {
				return acc.cap.Capped(acc.response()), nil
			}
			return nil, err
		}
	}
}

func (a *gmAccumulator) add(data []byte, onDelta func(llm.Delta) error) error {
	var c gmResponse
	if err := json.Unmarshal(data, &c); err != nil {
		return transport.MalformedJSON(fmt.Sprintf("stream event %d", a.events), err, string(data))
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		return gmStreamError(c.Error)
	}
	if c.UsageMetadata != nil {
		a.usage = c.UsageMetadata // cumulative: the last one wins
	}
	if c.PromptFeedback != nil && c.PromptFeedback.BlockReason != "" {
		a.blocked = c.PromptFeedback.BlockReason
	}
	for _, cand := range c.Candidates {
		if cand.Index != 0 {
			continue // openheim asks for one candidate
		}
		if cand.Content != nil {
			for _, p := range cand.Content.Parts {
				if err := a.part(p, onDelta); err != nil {
					return err
				}
			}
		}
		if cand.FinishReason != "" {
			a.finish = cand.FinishReason
		}
	}
	return nil
}

// part takes one content part. A thoughtSignature belongs to the part it
// came with, and goes back on it: on a function call to that call, on a
// thought part to the thinking block, on a text part (often the last,
// empty one of a streamed answer) to the text block.
func (a *gmAccumulator) part(p gmPart, onDelta func(llm.Delta) error) error {
	if fc := p.FunctionCall; fc != nil {
		id := fc.ID
		if id == "" {
			id = transport.NewCallID()
		}
		args := compactArgs(fc.Args)
		if err := a.cap.Charge(len(id) + len(fc.Name) + len(args) + len(p.ThoughtSignature)); err != nil {
			return err
		}
		b := message.Block{Type: message.TypeToolUse, ID: id, Name: fc.Name, Arguments: args}
		if p.ThoughtSignature != "" {
			sig := p.ThoughtSignature
			b.Signature = &sig
		}
		a.calls = append(a.calls, b)
		if onDelta != nil {
			return onDelta(llm.ToolCallDelta(len(a.calls)-1, id, fc.Name))
		}
		return nil
	}
	if p.ThoughtSignature != "" {
		if err := a.cap.Charge(len(p.ThoughtSignature)); err != nil {
			return err
		}
		if p.Thought {
			a.thinkSig = p.ThoughtSignature
		} else {
			a.textSig = p.ThoughtSignature
		}
	}
	if p.Thought {
		return a.cap.Forward(&a.thinking, llm.DeltaThinking, p.Text, onDelta)
	}
	return a.cap.Forward(&a.text, llm.DeltaText, p.Text, onDelta)
}

// compactArgs is a function call's args object as a compact JSON string.
func compactArgs(raw json.RawMessage) string {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil || buf.Len() == 0 || buf.String() == "null" {
		return "{}"
	}
	return buf.String()
}

func (a *gmAccumulator) response() *llm.Response {
	resp := &llm.Response{StopReason: mapGeminiFinish(a.finish, a.blocked, len(a.calls) > 0)}
	if a.thinking.Len() > 0 || a.thinkSig != "" {
		b := message.Block{Type: message.TypeThinking, Thinking: a.thinking.String()}
		if a.thinkSig != "" {
			sig := a.thinkSig
			b.Signature = &sig
		}
		resp.Content = append(resp.Content, b)
	}
	if a.text.Len() > 0 || a.textSig != "" {
		b := message.Text(a.text.String())
		if a.textSig != "" {
			sig := a.textSig
			b.Signature = &sig
		}
		resp.Content = append(resp.Content, b)
	}
	resp.Content = append(resp.Content, a.calls...)
	if u := a.usage; u != nil {
		resp.Usage = message.Usage{
			InputTokens:     max(u.PromptTokenCount-u.CachedContentTokenCount, 0),
			OutputTokens:    u.CandidatesTokenCount + u.ThoughtsTokenCount,
			CacheReadTokens: u.CachedContentTokenCount,
		}
	}
	return resp
}

// mapGeminiFinish maps Gemini's finishReason. A blocked prompt and the
// content filters are refusals; received function calls make any other
// normal end tool_use (Gemini says STOP after calling functions), but
// MAX_TOKENS stays max_tokens.
func mapGeminiFinish(reason, blocked string, hasCalls bool) event.StopReason {
	if blocked != "" {
		return event.StopRefusal
	}
	switch reason {
	case "MAX_TOKENS":
		return event.StopMaxTokens
	case "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII",
		"IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT":
		return event.StopRefusal
	}
	if hasCalls {
		return llm.StopToolUse
	}
	return event.StopEndTurn
}

// gmStreamError turns an in-stream error object into an error: a StatusError
// when its code is an HTTP status, so retries treat it like that answer.
func gmStreamError(raw json.RawMessage) error {
	var e gmError
	if json.Unmarshal(raw, &e) != nil || e.Message == "" {
		return transport.StreamError("", string(raw))
	}
	if e.Code >= 400 && e.Code <= 599 {
		body := e.Message
		if e.Status != "" {
			body = e.Status + ": " + body
		}
		return gmClassify(&llm.StatusError{Status: e.Code, Body: transport.Truncate(body, transport.MaxErrorBody)})
	}
	return transport.StreamError(e.Status, e.Message)
}

// maxOther bounds what is kept of text outside the event-stream format: an
// error object is small, and a server sending pages of it is broken.
const maxOther = 64 << 10

func (a *gmAccumulator) keepOther(line []byte) {
	if len(a.other) <= maxOther {
		a.other = append(append(a.other, line...), '\n')
	}
}

// otherError turns what the server wrote outside the event-stream format
// into the call's error: Gemini and Vertex end a failing stream with a raw
// JSON error object (often pretty-printed over several lines, after events
// that already carried a finishReason), which an event-stream reader
// ignores. A complete error object fails the call as soon as it is read;
// at the clean end of the stream (ended) anything else left there does
// too, while a stream cut inside it stays a cut.
func (a *gmAccumulator) otherError(ended bool) error {
	raw := bytes.TrimSpace(a.other)
	if len(raw) == 0 {
		return nil
	}
	if json.Valid(raw) {
		var obj struct {
			Error json.RawMessage `json:"error"`
		}
		var list []json.RawMessage
		if json.Unmarshal(raw, &list) == nil && len(list) > 0 {
			raw = list[0] // the alt=json form: [{"error": ...}]
		}
		if json.Unmarshal(raw, &obj) == nil && len(obj.Error) > 0 && string(obj.Error) != "null" {
			return gmStreamError(obj.Error)
		}
	}
	if ended || len(a.other) > maxOther {
		return fmt.Errorf("llm: gemini: the server wrote text outside the event stream: %q", transport.Truncate(string(raw), 300))
	}
	return nil
}
