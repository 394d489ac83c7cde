package llmtest

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Gemini wire shapes, field order as generativelanguage.googleapis.com sends
// them. Each SSE data event is a whole GenerateContentResponse.

type gemResponse struct {
	Candidates    []gemCandidate `json:"candidates,omitempty"`
	UsageMetadata *gemUsage      `json:"usageMetadata,omitempty"`
	ModelVersion  string         `json:"modelVersion"`
	ResponseID    string         `json:"responseId"`
}

type gemCandidate struct {
	Content      *gemContent `json:"content,omitempty"`
	FinishReason string      `json:"finishReason,omitempty"`
	Index        int         `json:"index"`
}

type gemContent struct {
	Parts []gemPart `json:"parts"`
	Role  string    `json:"role"`
}

type gemPart struct {
	Text             *string          `json:"text,omitempty"`
	Thought          bool             `json:"thought,omitempty"`
	FunctionCall     *gemFunctionCall `json:"functionCall,omitempty"`
	ThoughtSignature string           `json:"thoughtSignature,omitempty"`
}

type gemFunctionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

type gemUsage struct {
	PromptTokenCount        int `json:"promptTokenCount"`
	CandidatesTokenCount    int `json:"candidatesTokenCount,omitempty"`
	TotalTokenCount         int `json:"totalTokenCount"`
	CachedContentTokenCount int `json:"cachedContentTokenCount,omitempty"`
}

// geminiFinish maps a Reply.FinishReason (OpenAI's words) to Gemini's.
func geminiFinish(r Reply) string {
	switch r.FinishReason {
	case "", "stop", "tool_calls":
		return "STOP"
	case "length":
		return "MAX_TOKENS"
	case "content_filter":
		return "SAFETY"
	}
	return r.FinishReason
}

// geminiArgs is the arguments as the JSON object Gemini sends; it has no way
// to send anything else, so an empty or invalid script becomes {}.
func geminiArgs(s string) json.RawMessage {
	s = strings.TrimSpace(s)
	if s == "" || !json.Valid([]byte(s)) {
		return json.RawMessage(`{}`)
	}
	return json.RawMessage(s)
}

// geminiEvents renders the reply as a Gemini streamGenerateContent?alt=sse
// stream: thought parts, one event per text element, the function calls
// whole in one event, then the event carrying finishReason and the usage.
// Gemini has no end marker, so the stream just ends. It returns the index of
// the finish event (where a Hang reply stops); n numbers the response id.
func (r Reply) geminiEvents(model string, n int) ([]sseEvent, int) {
	var out []string
	add := func(c gemResponse) {
		c.ModelVersion, c.ResponseID = model, fmt.Sprintf("llmtest-gemini-%d", n)
		b, err := json.Marshal(c)
		if err != nil {
			panic(err) // only plain types and valid raw JSON: cannot happen
		}
		out = append(out, string(b))
	}
	// Like the real API, content events carry the prompt count so far; the
	// finish event carries the whole usage.
	var running *gemUsage
	if r.Usage != nil {
		running = &gemUsage{PromptTokenCount: r.Usage.Prompt, TotalTokenCount: r.Usage.Prompt}
	}
	parts := func(ps ...gemPart) {
		add(gemResponse{Candidates: []gemCandidate{{Content: &gemContent{Role: "model", Parts: ps}}},
			UsageMetadata: running})
	}
	malformed := func() {
		if r.Malformed && len(out) == 1 {
			out = append(out, `{"candidates":[{"content":{"parts":[{"text":"oops"`)
		}
	}

	for i, s := range r.Thinking {
		p := gemPart{Text: &s, Thought: true}
		if i == len(r.Thinking)-1 {
			p.ThoughtSignature = r.Signature
		}
		parts(p)
		malformed()
	}
	if len(r.Thinking) == 0 && r.Signature != "" {
		// A signature without thought text: an empty thought part holding it.
		empty := ""
		parts(gemPart{Text: &empty, Thought: true, ThoughtSignature: r.Signature})
		malformed()
	}
	for _, s := range r.Text {
		parts(gemPart{Text: &s})
		malformed()
	}
	if r.TextSignature != "" {
		// Gemini 3 closes a streamed answer with an empty text part
		// holding the signature of the text before it.
		empty := ""
		parts(gemPart{Text: &empty, ThoughtSignature: r.TextSignature})
		malformed()
	}
	if r.ErrorEvent != "" {
		msg, _ := json.Marshal(r.ErrorEvent)
		finishAt := len(out)
		out = append(out, `{"error":{"code":503,"message":`+string(msg)+`,"status":"UNAVAILABLE"}}`)
		return geminiSSE(out), finishAt
	}
	if len(r.ToolCalls) > 0 {
		var calls []gemPart
		for _, tc := range r.ToolCalls {
			calls = append(calls, gemPart{FunctionCall: &gemFunctionCall{ID: tc.ID, Name: tc.Name, Args: geminiArgs(tc.Arguments)},
				ThoughtSignature: tc.Signature})
		}
		parts(calls...)
		malformed()
	}

	finishAt := len(out)
	add(r.geminiFinal())
	malformed()
	return geminiSSE(out), finishAt
}

// geminiFinal is the event carrying the finishReason and the whole usage.
func (r Reply) geminiFinal() gemResponse {
	finish := gemCandidate{FinishReason: geminiFinish(r)}
	if finish.FinishReason != "SAFETY" {
		// The real API closes with an empty text part beside the reason; a
		// safety stop carries no content at all.
		empty := ""
		finish.Content = &gemContent{Role: "model", Parts: []gemPart{{Text: &empty}}}
	}
	final := gemResponse{Candidates: []gemCandidate{finish}}
	if u := r.Usage; u != nil {
		final.UsageMetadata = &gemUsage{PromptTokenCount: u.Prompt, CandidatesTokenCount: u.Completion,
			TotalTokenCount: u.Prompt + u.Completion, CachedContentTokenCount: u.Cached}
	}
	return final
}

func geminiSSE(data []string) []sseEvent {
	events := make([]sseEvent, len(data))
	for i, d := range data {
		events[i] = sseEvent{data: d}
	}
	return events
}

// geminiRawError is the bare error object Gemini writes after the events of
// a failing stream, pretty-printed as the API does.
func geminiRawError(msg string) string {
	m, _ := json.Marshal(msg)
	return "{\n  \"error\": {\n    \"code\": 503,\n    \"message\": " + string(m) +
		",\n    \"status\": \"UNAVAILABLE\"\n  }\n}\n"
}
