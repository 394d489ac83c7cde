package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/llm/sse"
	"github.com/openheim/openheim/runtime/llm/transport"
	"github.com/openheim/openheim/runtime/message"
	"github.com/tidwall/gjson"
)

// Wire shapes of one streamed chunk. Fields that some servers fill with
// unexpected types are decoded leniently (see looseString).

type oaToolCallDelta struct {
	Index    *int        `json:"index"`
	ID       looseString `json:"id"`
	Function struct {
		Name      looseString `json:"name"`
		Arguments looseString `json:"arguments"`
	} `json:"function"`
}

type oaUsage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

type oaError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

// looseString decodes a JSON string and ignores null or any other type:
// OpenRouter sends "reasoning" as an object on some models, and a chunk must
// not fail because of a field openheim only reads opportunistically.
type looseString string

func (s *looseString) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || b[0] != '"' {
		return nil
	}
	// Fast path for the common token without escapes: a nested
	// json.Unmarshal per field was most of the per-chunk decode cost.
	if inner := b[1 : len(b)-1]; bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		*s = looseString(inner)
		return nil
	}
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = looseString(v)
	return nil
}

// oaAccumulator assembles the Response from chunks.
type oaAccumulator struct {
	thinking strings.Builder
	text     strings.Builder
	calls    []*oaCallAcc
	byIndex  map[int]*oaCallAcc
	finish   string
	refused  bool // a delta.refusal arrived
	usage    *oaUsage
	chunks   int
	cap      *transport.AnswerCap
}

type oaCallAcc struct {
	id, name  string
	args      strings.Builder
	announced bool // its DeltaToolCall went out
}

// decodeOAStream reads SSE events until [DONE]. It forwards deltas as they
// arrive and returns the assembled response; an answer passing maxAnswer
// bytes (see transport.NewAnswerCap) ends there as max_tokens.
func decodeOAStream(body io.Reader, maxAnswer int, onDelta func(llm.Delta) error) (*llm.Response, error) {
	acc := &oaAccumulator{byIndex: map[int]*oaCallAcc{}, cap: transport.NewAnswerCap(maxAnswer)}
	r := sse.NewReader(body)
	for {
		ev, err := r.Next()
		if err != nil {
			return nil, transport.ReadFailure(err, acc.chunks, "chunk", "[DONE]")
		}
		data := strings.TrimSpace(ev.Data)
		if data == "[DONE]" {
			return acc.response(), nil
		}
		if data == "" || ev.Type == "ping" {
			continue
		}
		acc.chunks++
		if err := acc.add(data, onDelta); err != nil {
			if errors.Is(err, transport.ErrAnswerCap) {
				return acc.cap.Capped(acc.response()), nil
			}
			return nil, err
		}
	}
}

// add decodes one chunk. It walks the JSON with gjson instead of decoding
// it into structs: this runs for every streamed token and was the biggest
// cost of a busy server (a third of the time per chunk, 13 allocations).
func (a *oaAccumulator) add(data string, onDelta func(llm.Delta) error) error {
	if !gjson.Valid(data) {
		var v any
		return a.malformed(data, json.Unmarshal([]byte(data), &v))
	}
	root := gjson.Parse(data)
	if !root.IsObject() {
		return a.malformed(data, errors.New("a chunk must be an object"))
	}
	f := members(root, "choices", "usage", "error")
	choices, usage, errv := f[0], f[1], f[2]
	if errv.Exists() && errv.Type != gjson.Null {
		return chunkError(json.RawMessage(errv.Raw))
	}
	if usage.IsObject() {
		var u oaUsage
		if err := json.Unmarshal([]byte(usage.Raw), &u); err != nil {
			return a.malformed(data, err)
		}
		a.usage = &u // some servers repeat it cumulatively: keep the last
	}
	if choices.Exists() && choices.Type != gjson.Null && !choices.IsArray() {
		return a.malformed(data, errors.New("choices must be an array"))
	}
	var err error
	choices.ForEach(func(_, ch gjson.Result) bool {
		err = a.addChoice(ch, onDelta)
		return err == nil
	})
	return err
}

func (a *oaAccumulator) addChoice(ch gjson.Result, onDelta func(llm.Delta) error) error {
	f := members(ch, "index", "delta", "finish_reason")
	index, delta, finish := f[0], f[1], f[2]
	if index.Int() != 0 {
		return nil // openheim asks for one choice
	}
	if finish.Type == gjson.String && finish.Str != "" {
		a.finish = finish.Str
	}
	f = members(delta, "content", "reasoning_content", "reasoning", "tool_calls", "refusal")
	content, reasoningContent, reasoning, calls, refusal := f[0], f[1], f[2], f[3], f[4]
	if refusal.Type == gjson.String && refusal.Str != "" {
		// The model declined (structured outputs): its explanation is
		// the answer, and the call ends as a refusal.
		a.refused = true
	}
	// Fields some servers fill with other types (null, numbers) count as
	// absent, as looseString does. DeepSeek and vLLM stream reasoning as
	// reasoning_content, OpenRouter as reasoning.
	for _, f := range []struct {
		kind llm.DeltaKind
		v    gjson.Result
	}{{llm.DeltaThinking, reasoningContent}, {llm.DeltaThinking, reasoning}, {llm.DeltaText, content}, {llm.DeltaText, refusal}} {
		if f.v.Type != gjson.String {
			continue
		}
		if err := a.emit(f.kind, f.v.Str, onDelta); err != nil {
			return err
		}
	}
	if calls.IsArray() {
		var tcs []oaToolCallDelta
		if err := json.Unmarshal([]byte(calls.Raw), &tcs); err != nil {
			return a.malformed("", err)
		}
		for _, tc := range tcs {
			if err := a.addToolCall(tc, onDelta); err != nil {
				return err
			}
		}
	}
	return nil
}

// members returns the named members (at most 5) of a JSON object, zero
// Results for the missing ones, in one pass over it.
func members(obj gjson.Result, names ...string) (out [5]gjson.Result) {
	obj.ForEach(func(k, v gjson.Result) bool {
		for i, n := range names {
			if k.Str == n {
				out[i] = v
			}
		}
		return true
	})
	return out
}

// malformed is the error of this chunk; data "" leaves it out.
func (a *oaAccumulator) malformed(data string, err error) error {
	return transport.MalformedJSON(fmt.Sprintf("stream chunk %d", a.chunks), err, data)
}

func (a *oaAccumulator) emit(kind llm.DeltaKind, s string, onDelta func(llm.Delta) error) error {
	buf := &a.text
	if kind == llm.DeltaThinking {
		buf = &a.thinking
	}
	return a.cap.Forward(buf, kind, s, onDelta)
}

// addToolCall merges one fragment. Fragments are keyed by index; a fragment
// carrying a new id at an index already in use starts another call, because
// some compatible servers send every call whole with index 0.
func (a *oaAccumulator) addToolCall(tc oaToolCallDelta, onDelta func(llm.Delta) error) error {
	var call *oaCallAcc
	if tc.Index != nil {
		call = a.byIndex[*tc.Index]
		if call != nil && tc.ID != "" && call.id != "" && string(tc.ID) != call.id {
			call = nil
		}
	} else if len(a.calls) > 0 && (tc.ID == "" || string(tc.ID) == a.calls[len(a.calls)-1].id) {
		call = a.calls[len(a.calls)-1]
	}
	if call == nil {
		if err := a.cap.Charge(len(tc.ID) + len(tc.Function.Name)); err != nil {
			return err
		}
		call = &oaCallAcc{}
		a.calls = append(a.calls, call)
		if tc.Index != nil {
			a.byIndex[*tc.Index] = call
		}
	}
	if call.id == "" {
		call.id = string(tc.ID)
	}
	if call.name == "" {
		call.name = string(tc.Function.Name)
	}
	if !call.announced && call.name != "" && onDelta != nil {
		// The call begins once it has a name (its first fragment, on
		// every server seen); its place is its index among the calls.
		call.announced = true
		if err := onDelta(llm.ToolCallDelta(slices.Index(a.calls, call), call.id, call.name)); err != nil {
			return err
		}
	}
	args, err := a.cap.Take(string(tc.Function.Arguments))
	call.args.WriteString(args)
	return err
}

func (a *oaAccumulator) response() *llm.Response {
	resp := &llm.Response{StopReason: mapFinishReason(a.finish, len(a.calls) > 0)}
	if a.refused && a.finish != "length" {
		resp.StopReason = event.StopRefusal
	}
	if a.thinking.Len() > 0 {
		resp.Content = append(resp.Content, message.Block{Type: message.TypeThinking, Thinking: a.thinking.String()})
	}
	if a.text.Len() > 0 {
		resp.Content = append(resp.Content, message.Text(a.text.String()))
	}
	for _, c := range a.calls {
		id := c.id
		if id == "" {
			id = transport.NewCallID()
		}
		args := c.args.String()
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		resp.Content = append(resp.Content, message.Block{Type: message.TypeToolUse, ID: id, Name: c.name, Arguments: args})
	}
	if u := a.usage; u != nil {
		var cached int64
		if u.PromptTokensDetails != nil {
			cached = u.PromptTokensDetails.CachedTokens
		}
		resp.Usage = message.Usage{InputTokens: max(u.PromptTokens-cached, 0), OutputTokens: u.CompletionTokens,
			CacheReadTokens: cached}
	}
	return resp
}

// mapFinishReason maps OpenAI's finish_reason. Received tool calls win over
// "stop" and unknown reasons because several servers (Ollama, older vLLM)
// report "stop" after calling tools, and the loop must still run them;
// "length" stays max_tokens since the arguments may then be truncated.
func mapFinishReason(reason string, hasCalls bool) event.StopReason {
	switch reason {
	case "length":
		return event.StopMaxTokens
	case "content_filter":
		return event.StopRefusal
	case "tool_calls", "function_call":
		return llm.StopToolUse
	}
	if hasCalls {
		return llm.StopToolUse
	}
	return event.StopEndTurn
}

// chunkError turns an in-stream error object into an error. A numeric code
// that is an HTTP status (OpenRouter relays upstream 429/502 this way) becomes
// a StatusError so the retry policy treats it like the same HTTP answer.
func chunkError(raw json.RawMessage) error {
	var e oaError
	if json.Unmarshal(raw, &e) != nil || e.Message == "" {
		return transport.StreamError("", string(raw))
	}
	var code int
	if json.Unmarshal(e.Code, &code) == nil && code >= 400 && code <= 599 {
		return &llm.StatusError{Status: code, Body: transport.Truncate(e.Message, transport.MaxErrorBody)}
	}
	return transport.StreamError(e.Type, e.Message)
}
