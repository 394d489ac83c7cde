package gemini

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/llm/internal/wiretest"
	"github.com/openheim/openheim/runtime/llm/llmtest"
	"github.com/openheim/openheim/runtime/llm/retry"
	"github.com/openheim/openheim/runtime/message"
)

// Decoding, failures, timeouts, retries and secrecy.

// gmRawStream is a Gemini stream as the API sends it (CRLF line ends): a
// signed thought, text with multi-byte characters, two parallel calls (only
// the first signed, one without id) and usage on the finish event.
const gmRawStream = "data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"hm\",\"thought\": true,\"thoughtSignature\": \"c2lnLVQ=\"}],\"role\": \"model\"},\"index\": 0}],\"modelVersion\": \"gemini-2.5-pro\"}\r\n\r\n" +
	"data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"Hé\"}],\"role\": \"model\"},\"index\": 0}]}\r\n\r\n" +
	"data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"llo 世界\"}],\"role\": \"model\"},\"index\": 0}]}\r\n\r\n" +
	"data: {\"candidates\": [{\"content\": {\"parts\": [{\"functionCall\": {\"id\": \"x1\",\"name\": \"f\",\"args\": {\"p\": \"世\"}},\"thoughtSignature\": \"c2lnLUY=\"},{\"functionCall\": {\"name\": \"g\",\"args\": {}}}],\"role\": \"model\"},\"index\": 0}]}\r\n\r\n" +
	"data: {\"candidates\": [{\"content\": {\"parts\": [{\"text\": \"\"}],\"role\": \"model\"},\"finishReason\": \"STOP\",\"index\": 0}],\"usageMetadata\": {\"promptTokenCount\": 9,\"candidatesTokenCount\": 4,\"totalTokenCount\": 13}}\r\n\r\n"

func TestDecodeGMStreamSplitEverywhere(t *testing.T) {
	want := []message.Block{{Type: message.TypeThinking, Thinking: "hm", Signature: sig("c2lnLVQ=")}, message.Text("Héllo 世界"),
		{Type: message.TypeToolUse, ID: "x1", Name: "f", Arguments: `{"p":"世"}`, Signature: sig("c2lnLUY=")},
		{Type: message.TypeToolUse, Name: "g", Arguments: `{}`}}
	check := func(name string, r io.Reader) {
		t.Helper()
		var text strings.Builder
		got, err := decodeGMStream(r, 0, func(d llm.Delta) error {
			if d.Kind == llm.DeltaText {
				text.WriteString(d.Text)
			}
			return nil
		})
		if err != nil || len(got.Content) != 4 {
			t.Fatalf("%s: %#v, %v", name, got, err)
		}
		if !strings.HasPrefix(got.Content[3].ID, "call_") {
			t.Fatalf("%s: id %q", name, got.Content[3].ID)
		}
		got.Content[3].ID = ""
		if !reflect.DeepEqual(got.Content, want) || got.StopReason != llm.StopToolUse ||
			got.Usage != (message.Usage{InputTokens: 9, OutputTokens: 4}) || text.String() != "Héllo 世界" {
			t.Fatalf("%s: %#v (text %q)", name, got, text.String())
		}
	}
	for i := 0; i <= len(gmRawStream); i++ {
		check("split", io.MultiReader(strings.NewReader(gmRawStream[:i]), iotest.HalfReader(strings.NewReader(gmRawStream[i:]))))
	}
	check("one byte", iotest.OneByteReader(strings.NewReader(gmRawStream)))
	// A UTF-8 character cut across two reads, explicitly.
	cut := strings.Index(gmRawStream, "世界") + 1
	check("mid-rune", io.MultiReader(strings.NewReader(gmRawStream[:cut]), strings.NewReader(gmRawStream[cut:])))
}

func TestDecodeGMStreamEnds(t *testing.T) {
	text := `data: {"candidates":[{"content":{"parts":[{"text":"a"}],"role":"model"}}]}` + "\n\n"
	tests := []struct {
		name, stream, contains string
		retryable, cut         bool
		status                 int
		tooLong                bool
	}{
		{"eof without finishReason", text, "no finishReason after 1 events", true, true, 0, false},
		{"truncated final line", text + `data: {"candidates":[{"finishReason":"STOP"}]}`, "stream cut", true, true, 0, false},
		{"empty stream", "", "no finishReason after 0 events", true, true, 0, false},
		{"error object", text + `data: {"error":{"code":429,"message":"Resource exhausted","status":"RESOURCE_EXHAUSTED"}}` + "\n\n",
			"HTTP 429: RESOURCE_EXHAUSTED: Resource exhausted", true, false, 429, false},
		{"error too long", `data: {"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}` + "\n\n",
			"HTTP 400: INVALID_ARGUMENT: The input token count", false, false, 400, true},
		{"error without code", `data: {"error":{"message":"boom","status":"INTERNAL"}}` + "\n\n", "server error in stream (INTERNAL): boom", false, false, 0, false},
		{"error string", `data: {"error":"boom"}` + "\n\n", `server error in stream: "boom"`, false, false, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeGMStream(strings.NewReader(tt.stream), 0, nil)
			if err == nil || !strings.Contains(err.Error(), tt.contains) || llm.Retryable(err) != tt.retryable ||
				errors.Is(err, llm.ErrStreamCut) != tt.cut || errors.Is(err, llm.ErrContextTooLong) != tt.tooLong {
				t.Fatalf("err = %v (retryable %v)", err, llm.Retryable(err))
			}
			var se *llm.StatusError
			if got := errors.As(err, &se); got != (tt.status != 0) || (got && se.Status != tt.status) {
				t.Errorf("StatusError = %v", se)
			}
		})
	}
}

func TestGeminiErrors(t *testing.T) {
	tooLong := `{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}`
	tests := []wiretest.ErrCase{
		{Name: "401 echoing the key", Reply: llmtest.Reply{Status: 401, ErrorBody: `{"error":{"code":401,"message":"API key ` + gmTestKey + ` not valid","status":"UNAUTHENTICATED"}}`}, Contains: "HTTP 401: ", Status: 401},
		{Name: "400", Reply: llmtest.Reply{Status: 400}, Contains: "HTTP 400: ", Status: 400},
		{Name: "input token count", Reply: llmtest.Reply{Status: 400, ErrorBody: tooLong}, Contains: "exceeds the maximum number of tokens", Status: 400, Long: true},
		{Name: "429", Reply: llmtest.Reply{Status: 429, RetryAfter: "2"}, Contains: "HTTP 429: ", Retryable: true, Status: 429},
		{Name: "503", Reply: llmtest.Reply{Status: 503}, Contains: "HTTP 503: ", Retryable: true, Status: 503},
		{Name: "malformed", Reply: llmtest.Reply{Text: []string{"a"}, Malformed: true}, Contains: "malformed JSON in stream event 2"},
		{Name: "mid-stream error", Reply: llmtest.Reply{Text: []string{"a"}, ErrorEvent: "The model is overloaded."}, Contains: "HTTP 503: UNAVAILABLE: The model is overloaded.", Retryable: true, Status: 503},
		{Name: "cut after text", Reply: llmtest.Reply{Text: []string{"a", "b"}, CutAfter: 1}, Contains: "stream cut", Retryable: true, Cut: true},
		{Name: "cut before finish", Reply: llmtest.Reply{Text: []string{"a"}, CutAfter: 1}, Contains: "stream cut", Retryable: true, Cut: true},
	}
	for _, tt := range tests {
		t.Run(tt.Name, func(t *testing.T) {
			_, p := geminiSetup(t, Config{APIKey: gmTestKey}, tt.Reply)
			_, _, err := wiretest.Collect(t, p, geminiRequest())
			wiretest.CheckErrorClass(t, err, tt, gmTestKey)
			var se *llm.StatusError
			if tt.Reply.RetryAfter != "" && (!errors.As(err, &se) || se.RetryAfter != 2*time.Second) {
				t.Errorf("RetryAfter = %v", se)
			}
		})
	}
}

func TestGeminiEndsWithoutFinish(t *testing.T) {
	// A server (or proxy) that closes the stream cleanly mid-reply.
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, `data: {"candidates":[{"content":{"parts":[{"text":"par"}],"role":"model"}}]}`+"\r\n\r\n")
	}))
	defer ts.Close()
	ds, _, err := wiretest.Collect(t, New(Config{BaseURL: ts.URL}), geminiRequest())
	if !errors.Is(err, llm.ErrStreamCut) || !llm.Retryable(err) || len(ds) != 1 {
		t.Fatalf("err = %v, deltas %v", err, ds)
	}
}

func TestGeminiIdleTimeout(t *testing.T) {
	_, p := geminiSetup(t, Config{Timeout: 200 * time.Millisecond}, llmtest.Reply{Text: []string{"a"}, Hang: true})
	start := time.Now()
	_, _, err := wiretest.Collect(t, p, geminiRequest())
	if err == nil || !strings.Contains(err.Error(), "(stream idle)") || !llm.Retryable(err) || time.Since(start) > 2*time.Second {
		t.Fatalf("err = %v after %v", err, time.Since(start))
	}
}

func TestWithRetryGemini(t *testing.T) {
	ok := llmtest.Reply{Text: []string{"fine"}}
	tooLong := `{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}`
	tests := []struct {
		name         string
		replies      []llmtest.Reply
		wantRequests int
		wantErr      string
	}{
		{"429 with Retry-After then success", []llmtest.Reply{{Status: 429, RetryAfter: "1"}, ok}, 2, ""},
		{"500 x4 gives up", []llmtest.Reply{{Status: 500}, {Status: 500}, {Status: 500}, {Status: 500}, ok}, 4, "HTTP 500"},
		{"cut before anything forwarded", []llmtest.Reply{{ToolCalls: []llmtest.ToolCall{{Name: "f", Arguments: `{}`}}, CutAfter: 1}, ok}, 2, ""},
		{"cut after text not retried", []llmtest.Reply{{Text: []string{"a", "b"}, CutAfter: 2}, ok}, 1, "stream cut"},
		{"stream error before text retried", []llmtest.Reply{{ErrorEvent: "busy"}, ok}, 2, ""},
		{"stream error after text not retried", []llmtest.Reply{{Text: []string{"a"}, ErrorEvent: "busy"}, ok}, 1, "HTTP 503"},
		{"malformed not retried", []llmtest.Reply{{Malformed: true}, ok}, 1, "malformed JSON"},
		{"context too long not retried", []llmtest.Reply{{Status: 400, ErrorBody: tooLong}, ok}, 1, "context window"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			pol := wiretest.FastPolicy
			pol.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			srv, p := geminiSetup(t, Config{APIKey: gmTestKey}, tt.replies...)
			var text strings.Builder
			resp, err := retry.Wrap(p, pol).Stream(context.Background(), geminiRequest(), func(d llm.Delta) error {
				text.WriteString(d.Text)
				return nil
			})
			if n := len(srv.Requests()); n != tt.wantRequests {
				t.Errorf("%d requests, want %d", n, tt.wantRequests)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
			} else if err != nil || resp.Content[0].Text != "fine" || text.String() != "fine" {
				t.Fatalf("got %v (streamed %q), %v", resp, text.String(), err)
			}
			if retries := strings.Count(logs.String(), "level=WARN"); retries != tt.wantRequests-1 {
				t.Errorf("%d retry log lines, want %d", retries, tt.wantRequests-1)
			}
			if strings.Contains(logs.String(), gmTestKey) {
				t.Errorf("key in logs: %s", logs.String())
			}
		})
	}
}

func TestGeminiKeyNeverInErrors(t *testing.T) {
	echo := `{"error":{"code":403,"message":"key ` + gmTestKey + ` is blocked","status":"PERMISSION_DENIED"}}`
	replies := []llmtest.Reply{
		{Status: 403, ErrorBody: echo},
		{Status: 429, ErrorBody: echo, RetryAfter: "1"},
		{Status: 500, ErrorBody: strings.Repeat("x", 3000) + gmTestKey},
		{Text: []string{"a"}, ErrorEvent: "bad key " + gmTestKey},
		{Text: []string{"a"}, Malformed: true},
		{Text: []string{"a"}, CutAfter: 1},
		{Text: []string{"a"}, Hang: true},
	}
	for i, r := range replies {
		_, p := geminiSetup(t, Config{APIKey: gmTestKey, Timeout: 200 * time.Millisecond}, r)
		_, _, err := wiretest.Collect(t, p, geminiRequest())
		if err == nil {
			t.Fatalf("reply %d: no error", i)
		}
		if strings.Contains(err.Error(), gmTestKey) || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("reply %d: key in error: %v", i, err)
		}
	}
}
