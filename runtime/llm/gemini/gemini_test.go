package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/openheim/openheim/runtime/llm/llmtest"
	"github.com/openheim/openheim/runtime/message"
)

const gmTestKey = "AIzaSy-TEST-SECRET-gemini-0042"

// urlRecorder records the full URL (query included) of every request.
type urlRecorder struct {
	mu   sync.Mutex
	urls []string
}

func (u *urlRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	u.mu.Lock()
	u.urls = append(u.urls, r.URL.String())
	u.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

// geminiSetup starts a fake server with replies and a Gemini client on it.
func geminiSetup(t *testing.T, cfg GeminiConfig, replies ...llmtest.Reply) (*llmtest.Server, Provider) {
	t.Helper()
	srv := llmtest.New()
	t.Cleanup(srv.Close)
	srv.Enqueue(replies...)
	cfg.BaseURL = strings.TrimSuffix(srv.URL(), "/v1") + "/v1beta"
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	return srv, NewGemini(cfg)
}

func geminiRequest() *Request {
	return &Request{Model: "gemini-test", System: "be brief",
		Messages: []message.Message{{Role: message.RoleUser, Content: []message.Block{message.Text("hi")}}}}
}

// asJSON re-encodes v so that a decoded body and an expected literal compare
// independently of key order.
func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var x any
	if err := json.Unmarshal(b, &x); err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(x)
	return string(b)
}

func sig(s string) *string { return &s }

func TestGeminiStreamText(t *testing.T) {
	rec := &urlRecorder{}
	srv, p := geminiSetup(t, GeminiConfig{APIKey: gmTestKey, Headers: map[string]string{"X-Title": "openheim"},
		HTTPClient: &http.Client{Transport: rec}},
		llmtest.Reply{Text: []string{"Hel", "lo ", "wörld 🎉"}, Usage: &llmtest.Usage{Prompt: 100, Completion: 7, Cached: 60}})
	ds, resp, err := collect(t, p, geminiRequest())
	if err != nil {
		t.Fatal(err)
	}
	if want := []Delta{{DeltaText, "Hel"}, {DeltaText, "lo "}, {DeltaText, "wörld 🎉"}}; !reflect.DeepEqual(ds, want) {
		t.Errorf("deltas = %#v", ds)
	}
	want := &Response{Content: []message.Block{message.Text("Hello wörld 🎉")}, StopReason: StopEndTurn,
		Usage: message.Usage{InputTokens: 40, OutputTokens: 7, CacheReadTokens: 60}}
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("response = %#v", resp)
	}
	r := srv.Requests()[0]
	if r.Path != "/v1beta/models/gemini-test:streamGenerateContent" || r.Header.Get("x-goog-api-key") != gmTestKey ||
		r.Header.Get("Authorization") != "" || r.Header.Get("X-Title") != "openheim" {
		t.Errorf("request = %s %v", r.Path, r.Header)
	}
	if len(rec.urls) != 1 || !strings.HasSuffix(rec.urls[0], ":streamGenerateContent?alt=sse") ||
		strings.Contains(rec.urls[0], gmTestKey) || strings.Contains(rec.urls[0], "key=") {
		t.Errorf("urls = %v", rec.urls)
	}
	if got := asJSON(t, r.Body); got != `{"contents":[{"parts":[{"text":"hi"}],"role":"user"}],"systemInstruction":{"parts":[{"text":"be brief"}]}}` {
		t.Errorf("body = %s", got)
	}
}

func TestGeminiThinking(t *testing.T) {
	srv, p := geminiSetup(t, GeminiConfig{Thinking: "adaptive"},
		llmtest.Reply{Thinking: []string{"let me ", "think"}, Signature: "sig-T", Text: []string{"ok"}},
		llmtest.Reply{Signature: "sig-only", Text: []string{"a"}})
	ds, resp, err := collect(t, p, geminiRequest())
	if err != nil {
		t.Fatal(err)
	}
	if want := []Delta{{DeltaThinking, "let me "}, {DeltaThinking, "think"}, {DeltaText, "ok"}}; !reflect.DeepEqual(ds, want) {
		t.Errorf("deltas = %#v", ds)
	}
	want := []message.Block{{Type: message.TypeThinking, Thinking: "let me think", Signature: sig("sig-T")}, message.Text("ok")}
	if !reflect.DeepEqual(resp.Content, want) || resp.StopReason != StopEndTurn {
		t.Errorf("response = %#v", resp)
	}
	if got := asJSON(t, srv.Requests()[0].Body["generationConfig"]); got != `{"thinkingConfig":{"includeThoughts":true,"thinkingBudget":-1}}` {
		t.Errorf("generationConfig = %s", got)
	}
	// A signature on an empty thought part still yields a (signed) block.
	_, resp, err = collect(t, p, geminiRequest())
	want = []message.Block{{Type: message.TypeThinking, Signature: sig("sig-only")}, message.Text("a")}
	if err != nil || !reflect.DeepEqual(resp.Content, want) {
		t.Errorf("signature only: %#v, %v", resp, err)
	}
}

func TestGeminiGenerationConfig(t *testing.T) {
	tests := []struct {
		name     string
		cfg      GeminiConfig
		reqMax   int
		want     string // "" means absent
		buildErr string
	}{
		{"nothing", GeminiConfig{}, 0, "", ""},
		{"config max", GeminiConfig{MaxTokens: 1000}, 0, `{"maxOutputTokens":1000}`, ""},
		{"request wins", GeminiConfig{MaxTokens: 1000}, 50, `{"maxOutputTokens":50}`, ""},
		{"thinking off", GeminiConfig{Thinking: "off"}, 0, `{"thinkingConfig":{"thinkingBudget":0}}`, ""},
		{"both", GeminiConfig{Thinking: "Adaptive", MaxTokens: 9}, 0, `{"maxOutputTokens":9,"thinkingConfig":{"includeThoughts":true,"thinkingBudget":-1}}`, ""},
		{"unknown thinking", GeminiConfig{Thinking: "max"}, 0, "", `unknown thinking mode "max"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, p := geminiSetup(t, tt.cfg, llmtest.Reply{Text: []string{"ok"}})
			req := geminiRequest()
			req.MaxTokens = tt.reqMax
			_, _, err := collect(t, p, req)
			if tt.buildErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.buildErr) || len(srv.Requests()) != 0 {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			gc, ok := srv.Requests()[0].Body["generationConfig"]
			if tt.want == "" {
				if ok {
					t.Errorf("generationConfig = %v, want none", gc)
				}
			} else if got := asJSON(t, gc); got != tt.want {
				t.Errorf("generationConfig = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestGeminiFunctionCalls(t *testing.T) {
	calls := []llmtest.ToolCall{
		{ID: "fc-1", Name: "read_file", Arguments: `{"path": "dïr/ü.txt", "limit": 10}`, Signature: "sig-call"},
		{Name: "grep", Arguments: `{"q":"a"}`, Split: 4}, // Split is ignored: Gemini sends args whole
		{Name: "grep", Arguments: `{"q":"b"}`},
		{Name: "now"},
	}
	_, p := geminiSetup(t, GeminiConfig{}, llmtest.Reply{Text: []string{"Looking."}, ToolCalls: calls},
		llmtest.Reply{ToolCalls: calls[1:3]})
	_, resp, err := collect(t, p, geminiRequest())
	if err != nil {
		t.Fatal(err)
	}
	want := []message.Block{message.Text("Looking."),
		{Type: message.TypeToolUse, ID: "fc-1", Name: "read_file", Arguments: `{"path":"dïr/ü.txt","limit":10}`, Signature: sig("sig-call")},
		{Type: message.TypeToolUse, Name: "grep", Arguments: `{"q":"a"}`},
		{Type: message.TypeToolUse, Name: "grep", Arguments: `{"q":"b"}`},
		{Type: message.TypeToolUse, Name: "now", Arguments: `{}`}}
	if resp.StopReason != StopToolUse || len(resp.Content) != len(want) {
		t.Fatalf("got %#v", resp)
	}
	seen := map[string]bool{"fc-1": true}
	for i, b := range resp.Content {
		w := want[i]
		if w.Type == message.TypeToolUse && w.ID == "" {
			if !strings.HasPrefix(b.ID, "call_") || len(b.ID) < 20 || seen[b.ID] {
				t.Errorf("generated id %q not unique/well-formed", b.ID)
			}
			seen[b.ID] = true
			w.ID = b.ID
		}
		if !reflect.DeepEqual(b, w) {
			t.Errorf("block %d = %#v, want %#v", i, b, w)
		}
	}
	// Across replies: the same calls again get fresh ids.
	_, resp, err = collect(t, p, geminiRequest())
	if err != nil || len(resp.Content) != 2 {
		t.Fatalf("second reply: %#v, %v", resp, err)
	}
	for _, b := range resp.Content {
		if seen[b.ID] || !strings.HasPrefix(b.ID, "call_") {
			t.Errorf("id %q reused across replies", b.ID)
		}
		seen[b.ID] = true
	}
}

func TestGeminiSignatureRoundTrip(t *testing.T) {
	srv, p := geminiSetup(t, GeminiConfig{Thinking: "adaptive"},
		llmtest.Reply{Thinking: []string{"plan"}, Signature: "sig-T", ToolCalls: []llmtest.ToolCall{
			{Name: "f", Arguments: `{"a":1}`, Signature: "sig-F"}, {ID: "c2", Name: "g", Arguments: `{}`}}},
		llmtest.Reply{Text: []string{"done"}})
	req := geminiRequest()
	_, resp, err := collect(t, p, req)
	if err != nil {
		t.Fatal(err)
	}
	uses := message.Message{Content: resp.Content}.ToolUses()
	if len(uses) != 2 || uses[0].Signature == nil || *uses[0].Signature != "sig-F" || uses[1].Signature != nil {
		t.Fatalf("tool uses = %#v", uses)
	}
	id1 := uses[0].ID
	// Through the session store's JSON, as a resumed conversation would be.
	stored, err := json.Marshal(message.Message{Role: message.RoleAssistant, Content: resp.Content})
	if err != nil {
		t.Fatal(err)
	}
	var assistant message.Message
	if err := json.Unmarshal(stored, &assistant); err != nil {
		t.Fatal(err)
	}
	req.Messages = append(req.Messages, assistant, message.Message{Role: message.RoleTool, Content: []message.Block{
		message.ToolResult(id1, "f", "r1", false), message.ToolResult("c2", "", "boom", true)}})
	if _, resp, err = collect(t, p, req); err != nil || resp.Content[0].Text != "done" {
		t.Fatalf("second call: %#v, %v", resp, err)
	}
	want := `[{"parts":[{"text":"hi"}],"role":"user"},` +
		`{"parts":[{"text":"plan","thought":true,"thoughtSignature":"sig-T"},` +
		`{"functionCall":{"args":{"a":1},"id":"` + id1 + `","name":"f"},"thoughtSignature":"sig-F"},` +
		`{"functionCall":{"args":{},"id":"c2","name":"g"}}],"role":"model"},` +
		`{"parts":[{"functionResponse":{"id":"` + id1 + `","name":"f","response":{"content":"r1"}}},` +
		`{"functionResponse":{"id":"c2","name":"g","response":{"error":"boom"}}}],"role":"user"}]`
	if got := asJSON(t, srv.Requests()[1].Body["contents"]); got != want {
		t.Errorf("contents\n got %s\nwant %s", got, want)
	}
}

func TestBuildGMRequestJSON(t *testing.T) {
	schema := `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","additionalProperties":false,
		"properties":{"path":{"type":"string","description":"p","format":"uri"},"mode":{"type":["string","null"],"enum":["r","w"]},
		"n":{"type":"integer","const":3},"opts":{"$ref":"#/$defs/Opts"},"tags":{"type":"array","items":{"type":"string","examples":["x"]}}},
		"required":["path"],"$defs":{"Opts":{"type":"object","additionalProperties":{"type":"string"},"properties":{"x":{"type":"boolean","default":false}}}}}`
	req := &Request{Model: "m", System: "sys",
		Messages: []message.Message{
			{Role: message.RoleSystem, Content: []message.Block{message.Text("more rules")}},
			{Role: message.RoleUser, Content: []message.Block{message.Text("look"), {Type: message.TypeImage, MimeType: "image/png", Data: "AAA="}}},
			{Role: message.RoleUser, Content: []message.Block{message.Text(""), message.Text("again")}},
			{Role: message.RoleAssistant, Content: []message.Block{{Type: message.TypeThinking, Thinking: "unsigned"},
				{Type: message.TypeRedactedThinking, Data: "xx"}, message.Text("ok"),
				{Type: message.TypeToolUse, ID: "c1", Name: "f", Arguments: `{"a": [1, 2]}`},
				{Type: message.TypeToolUse, ID: "c2", Name: "g", Arguments: `{"cut":`}}},
			{Role: message.RoleTool, Content: []message.Block{message.ToolResult("c1", "", "r1", false), message.ToolResult("c2", "g", "", false)}},
			{Role: message.RoleUser, Content: []message.Block{message.Text("next")}},
			{Role: message.RoleAssistant, Content: []message.Block{{Type: message.TypeRedactedThinking, Data: "only"}}},
			{Role: message.RoleUser, Content: []message.Block{message.Text("still there?")}},
		},
		Tools: []ToolSpec{{Name: "f", Description: "does f", Parameters: json.RawMessage(schema)},
			{Name: "g"}, {Name: "h", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}},
	}
	wr, err := buildGMRequest(req, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(wr)
	want := `{"contents":[` +
		`{"role":"user","parts":[{"text":"look"},{"inlineData":{"mimeType":"image/png","data":"AAA="}},{"text":"again"}]},` +
		`{"role":"model","parts":[{"text":"ok"},{"functionCall":{"id":"c1","name":"f","args":{"a":[1,2]}}},{"functionCall":{"id":"c2","name":"g","args":{}}}]},` +
		`{"role":"user","parts":[{"functionResponse":{"id":"c1","name":"f","response":{"content":"r1"}}},{"functionResponse":{"id":"c2","name":"g","response":{"content":""}}},{"text":"next"},{"text":"still there?"}]}],` +
		`"systemInstruction":{"parts":[{"text":"sys"},{"text":"more rules"}]},` +
		`"tools":[{"functionDeclarations":[{"name":"f","description":"does f","parameters":{` +
		`"properties":{"mode":{"enum":["r","w"],"nullable":true,"type":"string"},"n":{"enum":["3"],"type":"integer"},` +
		`"opts":{"properties":{"x":{"default":false,"type":"boolean"}},"type":"object"},"path":{"description":"p","type":"string"},` +
		`"tags":{"items":{"type":"string"},"type":"array"}},"required":["path"],"type":"object"}},{"name":"g"},{"name":"h"}]}]}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if _, err := buildGMRequest(&Request{Tools: []ToolSpec{{Name: "bad", Parameters: json.RawMessage(`[1]`)}}}, 0, ""); err == nil ||
		!strings.Contains(err.Error(), `tool "bad"`) {
		t.Errorf("bad schema: %v", err)
	}
	minimal, _ := buildGMRequest(&Request{Model: "m"}, 0, "")
	if b, _ := json.Marshal(minimal); string(b) != `{"contents":[]}` {
		t.Errorf("minimal = %s", b)
	}
}

func TestGeminiFinishReasons(t *testing.T) {
	call := []llmtest.ToolCall{{ID: "c", Name: "f", Arguments: `{}`}}
	tests := []struct {
		reply llmtest.Reply
		want  string
	}{
		{llmtest.Reply{Text: []string{"x"}}, StopEndTurn},
		{llmtest.Reply{Text: []string{"x"}, FinishReason: "length"}, StopMaxTokens},
		{llmtest.Reply{ToolCalls: call}, StopToolUse},
		{llmtest.Reply{ToolCalls: call, FinishReason: "length"}, StopMaxTokens},
		{llmtest.Reply{FinishReason: "content_filter"}, StopRefusal},
		{llmtest.Reply{Text: []string{"x"}, FinishReason: "RECITATION"}, StopRefusal},
		{llmtest.Reply{FinishReason: "BLOCKLIST"}, StopRefusal},
		{llmtest.Reply{FinishReason: "PROHIBITED_CONTENT"}, StopRefusal},
		{llmtest.Reply{FinishReason: "SPII"}, StopRefusal},
		{llmtest.Reply{Text: []string{"x"}, FinishReason: "OTHER"}, StopEndTurn},
		{llmtest.Reply{FinishReason: "MALFORMED_FUNCTION_CALL"}, StopEndTurn},
	}
	for _, tt := range tests {
		t.Run(tt.reply.FinishReason+"/"+tt.want, func(t *testing.T) {
			_, p := geminiSetup(t, GeminiConfig{}, tt.reply)
			_, resp, err := collect(t, p, geminiRequest())
			if err != nil || resp.StopReason != tt.want {
				t.Fatalf("got %#v, %v; want %s", resp, err, tt.want)
			}
			if tt.reply.FinishReason == "content_filter" && len(resp.Content) != 0 {
				t.Errorf("content after SAFETY: %#v", resp.Content)
			}
		})
	}
}

func TestGeminiPromptBlockedAndUsage(t *testing.T) {
	blocked := `data: {"promptFeedback":{"blockReason":"PROHIBITED_CONTENT"},"usageMetadata":{"promptTokenCount":5,"totalTokenCount":5}}` + "\n\n"
	resp, err := decodeGMStream(strings.NewReader(blocked), 0, nil)
	if err != nil || resp.StopReason != StopRefusal || len(resp.Content) != 0 || resp.Usage.InputTokens != 5 {
		t.Fatalf("blocked: %#v, %v", resp, err)
	}
	// Usage is cumulative and the last report wins; thoughts count as output.
	usage := `data: {"candidates":[{"content":{"parts":[{"text":"a"}],"role":"model"}}],"usageMetadata":{"promptTokenCount":100,"totalTokenCount":100}}` + "\n\n" +
		`data: {"candidates":[{"content":{"parts":[{"text":""}],"role":"model"},"finishReason":"STOP"}],` +
		`"usageMetadata":{"promptTokenCount":100,"cachedContentTokenCount":30,"candidatesTokenCount":10,"thoughtsTokenCount":5,"totalTokenCount":115}}` + "\n\n"
	resp, err = decodeGMStream(strings.NewReader(usage), 0, nil)
	if err != nil || resp.Usage != (message.Usage{InputTokens: 70, OutputTokens: 15, CacheReadTokens: 30}) {
		t.Fatalf("usage: %#v, %v", resp, err)
	}
}

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
		got, err := decodeGMStream(r, 0, func(d Delta) error {
			if d.Kind == DeltaText {
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
		if !reflect.DeepEqual(got.Content, want) || got.StopReason != StopToolUse ||
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
			if err == nil || !strings.Contains(err.Error(), tt.contains) || Retryable(err) != tt.retryable ||
				errors.Is(err, ErrStreamCut) != tt.cut || errors.Is(err, ErrContextTooLong) != tt.tooLong {
				t.Fatalf("err = %v (retryable %v)", err, Retryable(err))
			}
			var se *StatusError
			if got := errors.As(err, &se); got != (tt.status != 0) || (got && se.Status != tt.status) {
				t.Errorf("StatusError = %v", se)
			}
		})
	}
}

func TestGeminiErrors(t *testing.T) {
	tooLong := `{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}`
	tests := []errCase{
		{"401 echoing the key", llmtest.Reply{Status: 401, ErrorBody: `{"error":{"code":401,"message":"API key ` + gmTestKey + ` not valid","status":"UNAUTHENTICATED"}}`},
			"HTTP 401: ", false, 401, false, false},
		{"400", llmtest.Reply{Status: 400}, "HTTP 400: ", false, 400, false, false},
		{"input token count", llmtest.Reply{Status: 400, ErrorBody: tooLong}, "exceeds the maximum number of tokens", false, 400, false, true},
		{"429", llmtest.Reply{Status: 429, RetryAfter: "2"}, "HTTP 429: ", true, 429, false, false},
		{"503", llmtest.Reply{Status: 503}, "HTTP 503: ", true, 503, false, false},
		{"malformed", llmtest.Reply{Text: []string{"a"}, Malformed: true}, "malformed JSON in stream event 2", false, 0, false, false},
		{"mid-stream error", llmtest.Reply{Text: []string{"a"}, ErrorEvent: "The model is overloaded."},
			"HTTP 503: UNAVAILABLE: The model is overloaded.", true, 503, false, false},
		{"cut after text", llmtest.Reply{Text: []string{"a", "b"}, CutAfter: 1}, "stream cut", true, 0, true, false},
		{"cut before finish", llmtest.Reply{Text: []string{"a"}, CutAfter: 1}, "stream cut", true, 0, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, p := geminiSetup(t, GeminiConfig{APIKey: gmTestKey}, tt.reply)
			_, _, err := collect(t, p, geminiRequest())
			checkErrorClass(t, err, tt, gmTestKey)
			var se *StatusError
			if tt.reply.RetryAfter != "" && (!errors.As(err, &se) || se.RetryAfter != 2*time.Second) {
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
	ds, _, err := collect(t, NewGemini(GeminiConfig{BaseURL: ts.URL}), geminiRequest())
	if !errors.Is(err, ErrStreamCut) || !Retryable(err) || len(ds) != 1 {
		t.Fatalf("err = %v, deltas %v", err, ds)
	}
}

func TestGeminiIdleTimeout(t *testing.T) {
	_, p := geminiSetup(t, GeminiConfig{Timeout: 200 * time.Millisecond}, llmtest.Reply{Text: []string{"a"}, Hang: true})
	start := time.Now()
	_, _, err := collect(t, p, geminiRequest())
	if err == nil || !strings.Contains(err.Error(), "(stream idle)") || !Retryable(err) || time.Since(start) > 2*time.Second {
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
			pol := fastPolicy
			pol.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			srv, p := geminiSetup(t, GeminiConfig{APIKey: gmTestKey}, tt.replies...)
			var text strings.Builder
			resp, err := WithRetry(p, pol).Stream(context.Background(), geminiRequest(), func(d Delta) error {
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
		_, p := geminiSetup(t, GeminiConfig{APIKey: gmTestKey, Timeout: 200 * time.Millisecond}, r)
		_, _, err := collect(t, p, geminiRequest())
		if err == nil {
			t.Fatalf("reply %d: no error", i)
		}
		if strings.Contains(err.Error(), gmTestKey) || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("reply %d: key in error: %v", i, err)
		}
	}
}
