package responses

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/llm/sse"
	"github.com/openheim/openheim/runtime/llm/transport"
)

// event is one stream event. One struct covers every type: each fills only
// its own fields. Which events carry what is from the vendor's SDK types
// (openai-go ResponseStreamEventUnion) and recorded streams.
type event struct {
	Type         string          `json:"type"`
	OutputIndex  *int            `json:"output_index"`
	ItemID       string          `json:"item_id"`
	SummaryIndex int             `json:"summary_index"`
	Delta        json.RawMessage `json:"delta"` // a string on the events openheim reads
	Text         string          `json:"text"`
	Refusal      string          `json:"refusal"`
	Arguments    string          `json:"arguments"`
	Item         *wireItem       `json:"item"`
	Response     *wireResponse   `json:"response"`
	// The error event: code and message at the top level (the API
	// reference) or in an error object (some recorded streams).
	Code    json.RawMessage `json:"code"`
	Message string          `json:"message"`
	Error   *wireError      `json:"error"`
}

type wireItem struct {
	ID               string `json:"id"`
	Type             string `json:"type"`
	CallID           string `json:"call_id"`
	Name             string `json:"name"`
	Arguments        string `json:"arguments"`
	EncryptedContent string `json:"encrypted_content"`
	Summary          []struct {
		Text string `json:"text"`
	} `json:"summary"`
	Content []struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Refusal string `json:"refusal"`
	} `json:"content"`
}

type wireResponse struct {
	Status            string     `json:"status"`
	Error             *wireError `json:"error"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Usage *wireUsage `json:"usage"`
}

type wireError struct {
	Code    json.RawMessage `json:"code"`
	Type    string          `json:"type"`
	Message string          `json:"message"`
}

// wireUsage: input_tokens includes the cached ones, output_tokens the
// reasoning ones.
type wireUsage struct {
	InputTokens        int64 `json:"input_tokens"`
	InputTokensDetails *struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens int64 `json:"output_tokens"`
}

// decodeStream reads events until response.completed (or incomplete). It
// forwards text, refusal and reasoning deltas as they arrive and returns
// the assembled response; an answer passing maxAnswer bytes (see
// transport.NewAnswerCap) ends there as max_tokens.
func decodeStream(body io.Reader, maxAnswer int, onDelta func(llm.Delta) error) (*llm.Response, error) {
	acc := &accumulator{byIndex: map[int]*item{}, byID: map[string]*item{}, cap: transport.NewAnswerCap(maxAnswer), onDelta: onDelta}
	r := sse.NewReader(body)
	for {
		ev, err := r.Next()
		if err != nil {
			return nil, transport.ReadFailure(err, acc.events, "event", "response.completed")
		}
		data := strings.TrimSpace(ev.Data)
		if data == "" || data == "[DONE]" || ev.Type == "ping" || ev.Type == "keepalive" {
			continue
		}
		acc.events++
		var e event
		if err := json.Unmarshal([]byte(data), &e); err != nil {
			return nil, transport.MalformedJSON(fmt.Sprintf("stream event %d (%s)", acc.events, ev.Type), err, data)
		}
		if e.Type == "" {
			e.Type = ev.Type
		}
		done, err := acc.add(&e)
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

// item is one output item being assembled: a message (text), a
// function_call (arguments) or a reasoning item (summary text).
type item struct {
	kind         string
	buf          strings.Builder
	refusal      bool
	callID, name string
	encrypted    string
	summaryIndex int
	summary      bool // reasoning: its text is a summary (reasoning_summary_text)
	announced    bool // function_call: its DeltaToolCall went out
}

type accumulator struct {
	items   []*item
	byIndex map[int]*item
	byID    map[string]*item
	final   *wireResponse
	events  int
	cap     *transport.AnswerCap
	onDelta func(llm.Delta) error
}

// add applies one event; done reports the end of the response.
func (a *accumulator) add(e *event) (done bool, err error) {
	switch e.Type {
	case "response.output_item.added":
		if e.Item != nil {
			return false, a.start(e)
		}
	case "response.output_item.done":
		if e.Item != nil {
			return false, a.finish(a.find(e, e.Item.Type), e.Item)
		}
	case "response.output_text.delta", "response.refusal.delta":
		it := a.find(e, "message")
		it.refusal = it.refusal || e.Type == "response.refusal.delta"
		return false, a.emit(it, llm.DeltaText, deltaString(e.Delta))
	case "response.output_text.done":
		return false, a.fill(a.find(e, "message"), llm.DeltaText, e.Text)
	case "response.refusal.done":
		it := a.find(e, "message")
		it.refusal = true
		return false, a.fill(it, llm.DeltaText, e.Refusal)
	case "response.reasoning_summary_text.delta":
		it := a.find(e, "reasoning")
		it.summary = true
		if e.SummaryIndex != it.summaryIndex && it.buf.Len() > 0 {
			// A new summary part: keep the parts apart as paragraphs.
			if err := a.emit(it, llm.DeltaThinking, "\n\n"); err != nil {
				return false, err
			}
		}
		it.summaryIndex = e.SummaryIndex
		return false, a.emit(it, llm.DeltaThinking, deltaString(e.Delta))
	case "response.reasoning_text.delta":
		// Raw reasoning, from servers running open models (gpt-oss).
		return false, a.emit(a.find(e, "reasoning"), llm.DeltaThinking, deltaString(e.Delta))
	case "response.function_call_arguments.delta":
		args, err := a.cap.Take(deltaString(e.Delta))
		a.find(e, "function_call").buf.WriteString(args)
		return false, err
	case "response.function_call_arguments.done":
		return false, a.fillArgs(a.find(e, "function_call"), e.Arguments)
	case "response.completed", "response.incomplete":
		a.final = e.Response
		if a.final == nil {
			a.final = &wireResponse{Status: "completed"}
		}
		return true, nil
	case "response.failed":
		if e.Response != nil && e.Response.Error != nil {
			return false, apiError(e.Response.Error)
		}
		return false, errors.New("llm: the response failed (response.failed without an error)")
	case "error":
		if e.Error != nil {
			return false, apiError(e.Error)
		}
		return false, apiError(&wireError{Code: e.Code, Message: e.Message})
	}
	// response.created, in_progress, content_part.*, reasoning_summary_part.*
	// and event types openheim has no use for (the API adds some) need
	// nothing.
	return false, nil
}

// deltaString is a delta that is a JSON string; other shapes (logprobs
// events carry objects) are nothing to show.
func deltaString(raw json.RawMessage) string {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// start begins the item of an output_item.added event.
func (a *accumulator) start(e *event) error {
	w := e.Item
	if err := a.cap.Charge(len(w.CallID) + len(w.Name) + len(w.EncryptedContent)); err != nil {
		return err
	}
	it := &item{kind: w.Type, callID: w.CallID, name: w.Name, encrypted: w.EncryptedContent}
	a.items = append(a.items, it)
	if e.OutputIndex != nil {
		a.byIndex[*e.OutputIndex] = it
	}
	if w.ID != "" {
		a.byID[w.ID] = it
	}
	if w.Type == "function_call" {
		if err := a.announce(it); err != nil {
			return err
		}
		return a.fillArgs(it, w.Arguments)
	}
	return nil
}

// announce forwards the start of a function call item (once it has a
// name): its place is the count of calls before it.
func (a *accumulator) announce(it *item) error {
	if it.announced || it.name == "" || a.onDelta == nil {
		return nil
	}
	it.announced = true
	n := 0
	for _, x := range a.items {
		if x == it {
			break
		}
		if x.kind == "function_call" {
			n++
		}
	}
	return a.onDelta(llm.ToolCallDelta(n, it.callID, it.name))
}

// find is the item an event belongs to, by item id, else output index; an
// event for an item never started starts one of the kind it implies.
func (a *accumulator) find(e *event, kind string) *item {
	if it := a.byID[e.ItemID]; it != nil && e.ItemID != "" {
		return it
	}
	if e.OutputIndex != nil {
		if it := a.byIndex[*e.OutputIndex]; it != nil {
			return it
		}
	}
	it := &item{kind: kind}
	a.items = append(a.items, it)
	if e.OutputIndex != nil {
		a.byIndex[*e.OutputIndex] = it
	}
	if e.ItemID != "" {
		a.byID[e.ItemID] = it
	}
	return it
}

// finish takes what output_item.done says of a whole item: the reasoning
// item's final encrypted_content, and, from servers that send no deltas,
// its text, summary or arguments.
func (a *accumulator) finish(it *item, w *wireItem) error {
	if it.kind == "" {
		it.kind = w.Type
	}
	switch w.Type {
	case "reasoning":
		if w.EncryptedContent != "" && w.EncryptedContent != it.encrypted {
			if err := a.cap.Charge(len(w.EncryptedContent)); err != nil {
				return err
			}
			it.encrypted = w.EncryptedContent
		}
		var parts []string
		for _, s := range w.Summary {
			parts = append(parts, s.Text)
		}
		it.summary = it.summary || len(parts) > 0
		return a.fill(it, llm.DeltaThinking, strings.Join(parts, "\n\n"))
	case "function_call":
		if it.callID == "" {
			it.callID = w.CallID
		}
		if it.name == "" {
			it.name = w.Name
		}
		if err := a.announce(it); err != nil {
			return err
		}
		return a.fillArgs(it, w.Arguments)
	case "message":
		var text strings.Builder
		for _, c := range w.Content {
			text.WriteString(c.Text)
			text.WriteString(c.Refusal)
			it.refusal = it.refusal || c.Type == "refusal"
		}
		return a.fill(it, llm.DeltaText, text.String())
	}
	return nil
}

// fill completes an item's text from a done event's whole value: what
// the deltas did not bring (all of it from servers that send only the
// done events) is forwarded as one more delta. A whole value that does not
// continue what the deltas brought changes nothing: what was shown stays.
func (a *accumulator) fill(it *item, kind llm.DeltaKind, full string) error {
	rest, ok := strings.CutPrefix(full, it.buf.String())
	if !ok {
		return nil
	}
	return a.emit(it, kind, rest)
}

// fillArgs completes a call's arguments from a whole value the same way.
func (a *accumulator) fillArgs(it *item, args string) error {
	rest, ok := strings.CutPrefix(args, it.buf.String())
	if !ok || rest == "" {
		return nil
	}
	kept, err := a.cap.Take(rest)
	it.buf.WriteString(kept)
	return err
}

func (a *accumulator) emit(it *item, kind llm.DeltaKind, s string) error {
	return a.cap.ForwardDelta(&it.buf, llm.Delta{Kind: kind, Text: s, Summary: it.summary}, a.onDelta)
}
