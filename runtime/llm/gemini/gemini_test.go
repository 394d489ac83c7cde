package gemini

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/llm/internal/wiretest"
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
func geminiSetup(t *testing.T, cfg Config, replies ...llmtest.Reply) (*llmtest.Server, llm.Provider) {
	t.Helper()
	return wiretest.Setup(t, cfg, func(c Config) llm.Provider {
		c.BaseURL = strings.TrimSuffix(c.BaseURL, "/v1") + "/v1beta"
		return New(c)
	}, replies...)
}

func geminiRequest() *llm.Request {
	return &llm.Request{Model: "gemini-test", System: "be brief",
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
	srv, p := geminiSetup(t, Config{APIKey: gmTestKey, Headers: map[string]string{"X-Title": "openheim"},
		HTTPClient: &http.Client{Transport: rec}},
		llmtest.Reply{Text: []string{"Hel", "lo ", "wörld 🎉"}, Usage: &llmtest.Usage{Prompt: 100, Completion: 7, Cached: 60}})
	ds, resp, err := wiretest.Collect(t, p, geminiRequest())
	if err != nil {
		t.Fatal(err)
	}
	if want := []llm.Delta{{Kind: llm.DeltaText, Text: "Hel"}, {Kind: llm.DeltaText, Text: "lo "}, {Kind: llm.DeltaText, Text: "wörld 🎉"}}; !reflect.DeepEqual(ds, want) {
		t.Errorf("deltas = %#v", ds)
	}
	want := &llm.Response{Content: []message.Block{message.Text("Hello wörld 🎉")}, StopReason: event.StopEndTurn,
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
	srv, p := geminiSetup(t, Config{Thinking: "adaptive"},
		llmtest.Reply{Thinking: []string{"let me ", "think"}, Signature: "sig-T", Text: []string{"ok"}},
		llmtest.Reply{Signature: "sig-only", Text: []string{"a"}})
	ds, resp, err := wiretest.Collect(t, p, geminiRequest())
	if err != nil {
		t.Fatal(err)
	}
	if want := []llm.Delta{{Kind: llm.DeltaThinking, Text: "let me "}, {Kind: llm.DeltaThinking, Text: "think"}, {Kind: llm.DeltaText, Text: "ok"}}; !reflect.DeepEqual(ds, want) {
		t.Errorf("deltas = %#v", ds)
	}
	want := []message.Block{{Type: message.TypeThinking, Thinking: "let me think", Signature: sig("sig-T")}, message.Text("ok")}
	if !reflect.DeepEqual(resp.Content, want) || resp.StopReason != event.StopEndTurn {
		t.Errorf("response = %#v", resp)
	}
	if got := asJSON(t, srv.Requests()[0].Body["generationConfig"]); got != `{"thinkingConfig":{"includeThoughts":true,"thinkingBudget":-1}}` {
		t.Errorf("generationConfig = %s", got)
	}
	// A signature on an empty thought part still yields a (signed) block.
	_, resp, err = wiretest.Collect(t, p, geminiRequest())
	want = []message.Block{{Type: message.TypeThinking, Signature: sig("sig-only")}, message.Text("a")}
	if err != nil || !reflect.DeepEqual(resp.Content, want) {
		t.Errorf("signature only: %#v, %v", resp, err)
	}
}

func TestGeminiGenerationConfig(t *testing.T) {
	tests := []struct {
		name     string
		cfg      Config
		reqMax   int
		want     string // "" means absent
		buildErr string
	}{
		{"nothing", Config{}, 0, "", ""},
		{"config max", Config{MaxTokens: 1000}, 0, `{"maxOutputTokens":1000}`, ""},
		{"request wins", Config{MaxTokens: 1000}, 50, `{"maxOutputTokens":50}`, ""},
		{"thinking off", Config{Thinking: "off"}, 0, `{"thinkingConfig":{"thinkingBudget":0}}`, ""},
		{"both", Config{Thinking: "Adaptive", MaxTokens: 9}, 0, `{"maxOutputTokens":9,"thinkingConfig":{"includeThoughts":true,"thinkingBudget":-1}}`, ""},
		{"unknown thinking", Config{Thinking: "max"}, 0, "", `unknown thinking mode "max"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, p := geminiSetup(t, tt.cfg, llmtest.Reply{Text: []string{"ok"}})
			req := geminiRequest()
			req.MaxTokens = tt.reqMax
			_, _, err := wiretest.Collect(t, p, req)
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
	_, p := geminiSetup(t, Config{}, llmtest.Reply{Text: []string{"Looking."}, ToolCalls: calls},
		llmtest.Reply{ToolCalls: calls[1:3]})
	_, resp, err := wiretest.Collect(t, p, geminiRequest())
	if err != nil {
		t.Fatal(err)
	}
	want := []message.Block{message.Text("Looking."),
		{Type: message.TypeToolUse, ID: "fc-1", Name: "read_file", Arguments: `{"path":"dïr/ü.txt","limit":10}`, Signature: sig("sig-call")},
		{Type: message.TypeToolUse, Name: "grep", Arguments: `{"q":"a"}`},
		{Type: message.TypeToolUse, Name: "grep", Arguments: `{"q":"b"}`},
		{Type: message.TypeToolUse, Name: "now", Arguments: `{}`}}
	if resp.StopReason != llm.StopToolUse || len(resp.Content) != len(want) {
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
	_, resp, err = wiretest.Collect(t, p, geminiRequest())
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
	srv, p := geminiSetup(t, Config{Thinking: "adaptive"},
		llmtest.Reply{Thinking: []string{"plan"}, Signature: "sig-T", ToolCalls: []llmtest.ToolCall{
			{Name: "f", Arguments: `{"a":1}`, Signature: "sig-F"}, {ID: "c2", Name: "g", Arguments: `{}`}}},
		llmtest.Reply{Text: []string{"done"}})
	req := geminiRequest()
	_, resp, err := wiretest.Collect(t, p, req)
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
	if _, resp, err = wiretest.Collect(t, p, req); err != nil || resp.Content[0].Text != "done" {
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
	req := &llm.Request{Model: "m", System: "sys",
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
		Tools: []llm.ToolSpec{{Name: "f", Description: "does f", Parameters: json.RawMessage(schema)},
			{Name: "g"}, {Name: "h", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}},
	}
	wr, err := buildGMRequest(req, 0, "", 0)
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
	if _, err := buildGMRequest(&llm.Request{Tools: []llm.ToolSpec{{Name: "bad", Parameters: json.RawMessage(`[1]`)}}}, 0, "", 0); err == nil ||
		!strings.Contains(err.Error(), `tool "bad"`) {
		t.Errorf("bad schema: %v", err)
	}
	minimal, _ := buildGMRequest(&llm.Request{Model: "m"}, 0, "", 0)
	if b, _ := json.Marshal(minimal); string(b) != `{"contents":[]}` {
		t.Errorf("minimal = %s", b)
	}
}

func TestGeminiFinishReasons(t *testing.T) {
	call := []llmtest.ToolCall{{ID: "c", Name: "f", Arguments: `{}`}}
	tests := []struct {
		reply llmtest.Reply
		want  event.StopReason
	}{
		{llmtest.Reply{Text: []string{"x"}}, event.StopEndTurn},
		{llmtest.Reply{Text: []string{"x"}, FinishReason: "length"}, event.StopMaxTokens},
		{llmtest.Reply{ToolCalls: call}, llm.StopToolUse},
		{llmtest.Reply{ToolCalls: call, FinishReason: "length"}, event.StopMaxTokens},
		{llmtest.Reply{FinishReason: "content_filter"}, event.StopRefusal},
		{llmtest.Reply{Text: []string{"x"}, FinishReason: "RECITATION"}, event.StopRefusal},
		{llmtest.Reply{FinishReason: "BLOCKLIST"}, event.StopRefusal},
		{llmtest.Reply{FinishReason: "PROHIBITED_CONTENT"}, event.StopRefusal},
		{llmtest.Reply{FinishReason: "SPII"}, event.StopRefusal},
		{llmtest.Reply{Text: []string{"x"}, FinishReason: "OTHER"}, event.StopEndTurn},
		{llmtest.Reply{FinishReason: "MALFORMED_FUNCTION_CALL"}, event.StopEndTurn},
	}
	for _, tt := range tests {
		t.Run(tt.reply.FinishReason+"/"+string(tt.want), func(t *testing.T) {
			_, p := geminiSetup(t, Config{}, tt.reply)
			_, resp, err := wiretest.Collect(t, p, geminiRequest())
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
	if err != nil || resp.StopReason != event.StopRefusal || len(resp.Content) != 0 || resp.Usage.InputTokens != 5 {
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

// TestGeminiToolCallStarts: a functionCall part announces its call, with
// its place among the reply's calls.
func TestGeminiToolCallStarts(t *testing.T) {
	_, p := geminiSetup(t, Config{}, llmtest.Reply{ToolCalls: []llmtest.ToolCall{
		{ID: "c1", Name: "read", Arguments: `{"path":"a"}`}, {ID: "c2", Name: "list", Arguments: `{}`}}})
	ds, resp, err := wiretest.Collect(t, p, geminiRequest())
	if err != nil {
		t.Fatal(err)
	}
	var starts []llm.CallStart
	for _, d := range ds {
		if d.Kind == llm.DeltaToolCall {
			starts = append(starts, *d.Call)
		}
	}
	uses := (message.Message{Content: resp.Content}).ToolUses()
	if len(starts) != 2 || len(uses) != 2 || starts[0].Index != 0 || starts[1].Index != 1 ||
		starts[0].Name != "read" || starts[1].Name != "list" || starts[1].ID != uses[1].ID {
		t.Errorf("starts = %+v, uses %+v", starts, uses)
	}
}
