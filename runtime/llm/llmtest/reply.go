package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"unicode/utf8"
)

// Reply scripts the server's answer to one request. The JSON tags let a whole
// conversation be kept in a file and loaded with LoadScript.
type Reply struct {
	Text      []string   `json:"text,omitempty"`     // one content delta per element
	Thinking  []string   `json:"thinking,omitempty"` // one reasoning_content delta per element, sent before the text
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// FinishReason defaults to "tool_calls" when there are tool calls, else
	// "stop". It is written in OpenAI's words and mapped to each wire's own:
	// stop, length, tool_calls, content_filter become Anthropic's end_turn,
	// max_tokens, tool_use, refusal and Gemini's STOP, MAX_TOKENS, STOP,
	// SAFETY; any other value (pause_turn, RECITATION) is sent as it is.
	FinishReason string `json:"finish_reason,omitempty"`

	// Signature is the thinking signature (Anthropic signature_delta; Gemini
	// thoughtSignature on the thought part).
	Signature string `json:"signature,omitempty"`
	// TextSignature is Gemini's thoughtSignature on a text part: sent on a
	// last, empty text part, as Gemini 3 streams it.
	TextSignature string `json:"text_signature,omitempty"`
	// Encrypted is the Responses API reasoning item's encrypted_content
	// (the Thinking elements are its summary deltas).
	Encrypted string `json:"encrypted,omitempty"`
	// Refusal is a refusal streamed instead of text, one delta per element
	// (OpenAI chat delta.refusal; Responses response.refusal.delta).
	Refusal []string `json:"refusal,omitempty"`
	// RawError is a Gemini error message sent after the events as a bare,
	// pretty-printed JSON object {"error":{"code":503,...}}, outside the
	// event-stream format, as Gemini and Vertex do.
	RawError string `json:"raw_error,omitempty"`
	// RedactedThinking blocks (Anthropic), sent before the thinking.
	RedactedThinking []string `json:"redacted_thinking,omitempty"`
	// ErrorEvent is a mid-stream error the wire sends instead of finishing
	// (Anthropic `event: error`, Gemini an error object), after the text.
	ErrorEvent string `json:"error_event,omitempty"`
	// Usage is the reply's token usage. OpenAI: a final `choices: []`
	// chunk, only when the request asked for stream_options.include_usage;
	// Anthropic: always, in message_start and message_delta; Gemini: the
	// usageMetadata of the last event.
	Usage *Usage `json:"usage,omitempty"`

	// Status other than 0 or 200 answers with that HTTP status instead of a
	// stream: RetryAfter becomes the Retry-After header, ErrorBody the body
	// (default: an OpenAI-style error object).
	Status     int    `json:"status,omitempty"`
	RetryAfter string `json:"retry_after,omitempty"`
	ErrorBody  string `json:"error_body,omitempty"`
	// EchoRequest makes the error body quote the request's URL (path and
	// query) and every header (after ErrorBody, when set), as gateways that
	// explain a 401 do: a test can check that what the client sent never
	// reaches the user.
	EchoRequest bool `json:"echo_request,omitempty"`

	CutAfter     int  `json:"cut_after,omitempty"`      // abort the connection after N chunks, before [DONE]
	Malformed    bool `json:"malformed,omitempty"`      // send a chunk of invalid JSON after the first chunk
	DelayMs      int  `json:"delay_ms,omitempty"`       // wait before the response headers (and so the first chunk)
	ChunkDelayMs int  `json:"chunk_delay_ms,omitempty"` // wait between chunks
	Hang         bool `json:"hang,omitempty"`           // send every chunk before the finish chunk (role, thinking, text, tool fragments), then block until the client or server goes away

	CRLF                bool `json:"crlf,omitempty"`                  // end lines with \r\n
	NoSpace             bool `json:"no_space,omitempty"`              // write "data:" without the space
	KeepAlive           bool `json:"keep_alive,omitempty"`            // ": keep-alive" comments between chunks
	ErrorNull           bool `json:"error_null,omitempty"`            // add "error": null to every chunk
	RejectStreamOptions bool `json:"reject_stream_options,omitempty"` // 400 if the request has stream_options; the reply stays queued
}

// ToolCall is one scripted tool call.
type ToolCall struct {
	ID        string `json:"id,omitempty"` // empty: the fragments carry no id at all
	Name      string `json:"name"`
	Arguments string `json:"arguments"` // the JSON argument string
	Split     int    `json:"split,omitempty"`
	// Signature is Gemini's thoughtSignature on the functionCall part.
	Signature string `json:"signature,omitempty"`
}

// Usage is the token usage reported in the usage chunk.
type Usage struct {
	Prompt     int `json:"prompt"`
	Completion int `json:"completion"`
	Cached     int `json:"cached,omitempty"`
	// CacheCreation is Anthropic's cache_creation_input_tokens.
	CacheCreation int `json:"cache_creation,omitempty"`
	// Reasoning is the Responses API's output_tokens_details.reasoning_tokens
	// (part of Completion).
	Reasoning int `json:"reasoning,omitempty"`
}

// LoadScript reads a JSON array of Reply. Unknown fields are an error so a
// misspelt option does not silently script a different reply.
func LoadScript(path string) ([]Reply, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var rs []Reply
	if err := dec.Decode(&rs); err != nil {
		return nil, fmt.Errorf("llmtest: %s: %w", path, err)
	}
	return rs, nil
}

// Wire shapes, field order as OpenAI sends them.

type wireChunk struct {
	ID      string          `json:"id"`
	Object  string          `json:"object"`
	Created int64           `json:"created"`
	Model   string          `json:"model"`
	Choices []wireChoice    `json:"choices"`
	Usage   *wireUsage      `json:"usage,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

type wireChoice struct {
	Index        int       `json:"index"`
	Delta        wireDelta `json:"delta"`
	FinishReason *string   `json:"finish_reason"`
}

type wireDelta struct {
	Role             string         `json:"role,omitempty"`
	Content          *string        `json:"content,omitempty"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	Refusal          string         `json:"refusal,omitempty"`
	ToolCalls        []wireToolCall `json:"tool_calls,omitempty"`
}

type wireToolCall struct {
	Index    int          `json:"index"`
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type wireUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// openaiEvents renders the reply as OpenAI chat-completion chunks, without
// the [DONE] end marker, and the index of the finish chunk (where a Hang
// reply stops).
func (r Reply) openaiEvents(id, model string, includeUsage bool) (events []sseEvent, finishAt int) {
	var out []string
	add := func(c wireChunk) {
		c.ID, c.Object, c.Created, c.Model = id, "chat.completion.chunk", 1764460800, model
		if r.ErrorNull {
			c.Error = json.RawMessage("null")
		}
		b, err := json.Marshal(c)
		if err != nil {
			panic(err) // only plain types: cannot happen
		}
		out = append(out, string(b))
	}
	delta := func(d wireDelta) {
		add(wireChunk{Choices: []wireChoice{{Delta: d}}})
	}

	empty := ""
	delta(wireDelta{Role: "assistant", Content: &empty})
	if r.Malformed {
		out = append(out, `{"id":"`+id+`","choices":[{"index":0,"delta":{"content":"oops"`)
	}
	for _, s := range r.Thinking {
		delta(wireDelta{ReasoningContent: s})
	}
	for _, s := range r.Text {
		delta(wireDelta{Content: &s})
	}
	for _, s := range r.Refusal {
		delta(wireDelta{Refusal: s})
	}
	for i, tc := range r.ToolCalls {
		for j, frag := range splitRunes(tc.Arguments, tc.Split) {
			w := wireToolCall{Index: i, Function: wireFunction{Arguments: frag}}
			if j == 0 {
				w.ID, w.Type, w.Function.Name = tc.ID, "function", tc.Name
			}
			delta(wireDelta{ToolCalls: []wireToolCall{w}})
		}
	}
	finish := r.FinishReason
	if finish == "" {
		finish = "stop"
		if len(r.ToolCalls) > 0 {
			finish = "tool_calls"
		}
	}
	finishAt = len(out)
	add(wireChunk{Choices: []wireChoice{{FinishReason: &finish}}})
	if includeUsage && r.Usage != nil {
		u := &wireUsage{PromptTokens: r.Usage.Prompt, CompletionTokens: r.Usage.Completion,
			TotalTokens: r.Usage.Prompt + r.Usage.Completion}
		u.PromptTokensDetails.CachedTokens = r.Usage.Cached
		add(wireChunk{Choices: []wireChoice{}, Usage: u})
	}
	for _, d := range out {
		events = append(events, sseEvent{data: d})
	}
	return events, finishAt
}

// splitRunes cuts s into n pieces of about equal length on rune boundaries,
// so each fragment is valid UTF-8 inside its JSON string.
func splitRunes(s string, n int) []string {
	count := utf8.RuneCountInString(s)
	if n <= 1 || count <= 1 {
		return []string{s}
	}
	n = min(n, count)
	out := make([]string, 0, n)
	per, extra := count/n, count%n
	for i := 0; i < n; i++ {
		k := per
		if i < extra {
			k++
		}
		end := 0
		for ; k > 0; k-- {
			_, size := utf8.DecodeRuneInString(s[end:])
			end += size
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}
