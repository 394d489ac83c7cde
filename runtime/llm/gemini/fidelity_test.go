package gemini

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/llm/internal/wiretest"
	"github.com/openheim/openheim/runtime/llm/llmtest"
	"github.com/openheim/openheim/runtime/message"
)

// TestGeminiTextSignatureRoundTrip: Gemini 3 closes a streamed answer with
// an empty text part holding the thoughtSignature of the text. It is kept
// on the text block and goes back on the text part, not on a thought part
// of its own.
func TestGeminiTextSignatureRoundTrip(t *testing.T) {
	srv, p := geminiSetup(t, Config{}, llmtest.Reply{Text: []string{"There are ", "3."}, TextSignature: "EqsFCqgF"},
		llmtest.Reply{Text: []string{"ok"}})
	req := geminiRequest()
	_, resp, err := wiretest.Collect(t, p, req)
	if err != nil {
		t.Fatal(err)
	}
	want := []message.Block{{Type: message.TypeText, Text: "There are 3.", Signature: sig("EqsFCqgF")}}
	if !reflect.DeepEqual(resp.Content, want) {
		t.Fatalf("content = %#v", resp.Content)
	}
	req.Messages = append(req.Messages, message.Message{Role: message.RoleAssistant, Content: resp.Content},
		message.Message{Role: message.RoleUser, Content: []message.Block{message.Text("and?")}})
	if _, _, err := wiretest.Collect(t, p, req); err != nil {
		t.Fatal(err)
	}
	if got := asJSON(t, srv.Requests()[1].Body["contents"]); got != `[{"parts":[{"text":"hi"}],"role":"user"},`+
		`{"parts":[{"text":"There are 3.","thoughtSignature":"EqsFCqgF"}],"role":"model"},{"parts":[{"text":"and?"}],"role":"user"}]` {
		t.Errorf("contents = %s", got)
	}
}

// TestGeminiSignedEmptyText: a signature with no text at all goes back as
// the empty text part it came on ("text" present: a part needs data).
func TestGeminiSignedEmptyText(t *testing.T) {
	req := geminiRequest()
	req.Messages = append(req.Messages, message.Message{Role: message.RoleAssistant, Content: []message.Block{
		{Type: message.TypeText, Signature: sig("S")}, {Type: message.TypeToolUse, ID: "c", Name: "f", Arguments: "{}", Signature: sig("F")}}})
	wr, err := buildGMRequest(req, 0, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := asJSON(t, wr.Contents[1]); got != `{"parts":[{"text":"","thoughtSignature":"S"},{"functionCall":{"args":{},"id":"c","name":"f"},"thoughtSignature":"F"}],"role":"model"}` {
		t.Errorf("model content = %s", got)
	}
}

// TestGeminiThinkingByModel: thinking = "off" sends what the model takes
// (the Pro models cannot turn thinking off: their minimum, 128), "budget"
// the configured budget with thoughts.
func TestGeminiThinkingByModel(t *testing.T) {
	for _, tt := range []struct {
		thinking, model string
		budget          int
		want            string
	}{
		{"off", "gemini-2.5-pro", 0, `{"thinkingConfig":{"thinkingBudget":128}}`},
		{"off", "gemini-3-pro-preview", 0, `{"thinkingConfig":{"thinkingBudget":128}}`},
		{"off", "models/gemini-3.1-pro-preview", 0, `{"thinkingConfig":{"thinkingBudget":128}}`},
		{"off", "gemini-2.5-flash", 0, `{"thinkingConfig":{"thinkingBudget":0}}`},
		{"off", "gemini-2.5-flash-lite", 0, `{"thinkingConfig":{"thinkingBudget":0}}`},
		{"budget", "gemini-2.5-pro", 4096, `{"thinkingConfig":{"includeThoughts":true,"thinkingBudget":4096}}`},
		{"budget", "gemini-2.5-flash", 0, `{"thinkingConfig":{"includeThoughts":true,"thinkingBudget":-1}}`},
	} {
		srv, p := geminiSetup(t, Config{Thinking: tt.thinking, ThinkingBudget: tt.budget}, llmtest.Reply{Text: []string{"ok"}})
		req := geminiRequest()
		req.Model = tt.model
		if _, _, err := wiretest.Collect(t, p, req); err != nil {
			t.Fatal(err)
		}
		if got := asJSON(t, srv.Requests()[0].Body["generationConfig"]); got != tt.want {
			t.Errorf("%s on %s: generationConfig = %s, want %s", tt.thinking, tt.model, got, tt.want)
		}
	}
}

// TestGeminiRawErrorAfterStream: a bare JSON error object after (or
// instead of) the events fails the call as the error it is, even after a
// finishReason: before, the call ended as a success with the partial text.
func TestGeminiRawErrorAfterStream(t *testing.T) {
	t.Run("fake server", func(t *testing.T) {
		_, p := geminiSetup(t, Config{}, llmtest.Reply{Text: []string{"Okay"}, RawError: "The model is overloaded. Please try again later."})
		_, _, err := wiretest.Collect(t, p, geminiRequest())
		wiretest.CheckErrorClass(t, err, wiretest.ErrCase{Contains: "HTTP 503: UNAVAILABLE: The model is overloaded", Retryable: true, Status: 503}, gmTestKey)
	})
	data := func(s string) string { return "data: " + s + "\r\n\r\n" }
	text := data(`{"candidates": [{"content": {"parts": [{"text": "Okay"}],"role": "model"},"index": 0}]}`)
	finish := data(`{"candidates": [{"content": {"parts": [{"text": ""}],"role": "model"},"finishReason": "STOP","index": 0}]}`)
	for _, tt := range []struct {
		name, body, contains string
		status               int
		retryable, cut       bool
	}{
		{"one line, no final newline", text + `{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED"}}`,
			"HTTP 429: RESOURCE_EXHAUSTED: Quota exceeded", 429, true, false},
		{"array form", text + "[{\n  \"error\": {\n    \"code\": 500,\n    \"message\": \"Internal\",\n    \"status\": \"INTERNAL\"\n  }\n}]\n",
			"HTTP 500: INTERNAL: Internal", 500, true, false},
		{"instead of events", "{\n  \"error\": {\n    \"code\": 400,\n    \"message\": \"bad\",\n    \"status\": \"INVALID_ARGUMENT\"\n  }\n}\n",
			"HTTP 400: INVALID_ARGUMENT: bad", 400, false, false},
		{"other text", text + finish + "<html>gateway timeout</html>\n", "outside the event stream", 0, false, false},
		{"cut inside the error", text + "{\n  \"error\": {\n    \"code\": 5", "stream cut", 0, true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = w.Write([]byte(tt.body))
			}))
			defer ts.Close()
			_, _, err := wiretest.Collect(t, New(Config{BaseURL: ts.URL, APIKey: gmTestKey, Timeout: 5 * time.Second}), geminiRequest())
			wiretest.CheckErrorClass(t, err, wiretest.ErrCase{Contains: tt.contains, Status: tt.status, Retryable: tt.retryable, Cut: tt.cut}, gmTestKey)
		})
	}
	// A clean stream with nothing outside the format is still a success.
	_, err := decodeGMStream(strings.NewReader(text+finish), 0, nil)
	if err != nil || errors.Is(err, llm.ErrStreamCut) {
		t.Fatalf("clean stream: %v", err)
	}
}
