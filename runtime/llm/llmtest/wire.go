package llmtest

import (
	"strconv"
	"strings"
)

// Wire is an LLM API's wire format. One Server speaks all of them, chosen by
// the request path, and renders the same scripted Reply in each, so one
// script drives the same scenario against every provider client.
type Wire int

const (
	WireOpenAI    Wire = iota // POST {base}/chat/completions
	WireAnthropic             // POST {base}/messages
	WireGemini                // POST {base}/models/{model}:streamGenerateContent?alt=sse
	WireResponses             // POST {base}/responses (OpenAI Responses API)
)

// sseEvent is one Server-Sent Event: an optional `event:` name and its data.
type sseEvent struct {
	name string
	data string
}

func wireOf(path string) (Wire, bool) {
	switch {
	case strings.HasSuffix(path, "/chat/completions"):
		return WireOpenAI, true
	case strings.HasSuffix(path, "/messages"):
		return WireAnthropic, true
	case strings.HasSuffix(path, ":streamGenerateContent"):
		return WireGemini, true
	case strings.HasSuffix(path, "/responses"):
		return WireResponses, true
	}
	return 0, false
}

// geminiModel is the model named in a Gemini path (.../models/{model}:verb).
func geminiModel(path string) string {
	i := strings.LastIndex(path, "/models/")
	if i < 0 {
		return ""
	}
	m, _, _ := strings.Cut(path[i+len("/models/"):], ":")
	return m
}

// defaultErrorBody is each API's own error object for a scripted status.
func defaultErrorBody(w Wire, status int) string {
	msg := "llmtest: scripted HTTP " + strconv.Itoa(status)
	switch w {
	case WireAnthropic:
		return `{"type":"error","error":{"type":"api_error","message":"` + msg + `"}}`
	case WireGemini:
		return `{"error":{"code":` + strconv.Itoa(status) + `,"message":"` + msg + `","status":"UNKNOWN"}}`
	}
	return `{"error":{"message":"` + msg + `","type":"llmtest"}}`
}
