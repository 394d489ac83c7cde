package replay

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/message"
)

func writeCassette(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.json")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const cassette = `{"version": 1, "replies": [
 {"request": {"messages": [{"role": "user", "content": [{"type": "text", "text": "list it"}]}]},
  "thinking": "I will list.", "text": "Let me look at it.",
  "tool_calls": [{"id": "call_1", "name": "list_dir", "arguments": {"path": "."}},
                 {"name": "read_file", "arguments": "{\"path\": \"a.txt\"}"}],
  "usage": {"input_tokens": 10, "output_tokens": 5, "cache_creation_tokens": 0, "cache_read_tokens": 2}},
 {"request": {"messages": [
    {"role": "user", "content": [{"type": "text", "text": "list it"}]},
    {"role": "assistant", "content": [{"type": "thinking", "thinking": "I will list."}, {"type": "text", "text": "Let me look at it."},
       {"type": "tool_use", "id": "call_1", "name": "list_dir", "arguments": "{\"path\": \".\"}"},
       {"type": "tool_use", "id": "call_1_2", "name": "read_file", "arguments": "{\"path\":\"a.txt\"}"}]},
    {"role": "tool", "content": [{"type": "tool_result", "tool_call_id": "call_1", "tool_name": "list_dir", "content": "*"},
       {"type": "tool_result", "tool_call_id": "call_1_2", "tool_name": "read_file", "content": "hello"}]}]},
  "text": "Done.", "stop_reason": "max_tokens"},
 {"text": "no request check"}
]}`

func firstRequest() *llm.Request {
	return &llm.Request{Model: "any", Messages: []message.Message{{Role: message.RoleUser, Content: []message.Block{message.Text("list it")}}}}
}

// secondRequest is the conversation after the first reply, with live tool
// results.
func secondRequest(first *llm.Response, listing, file string) *llm.Request {
	req := firstRequest()
	req.Messages = append(req.Messages,
		message.Message{Role: message.RoleAssistant, Content: append([]message.Block(nil), first.Content...)},
		message.Message{Role: message.RoleTool, Content: []message.Block{
			message.ToolResult("call_1", "list_dir", listing, false),
			message.ToolResult("call_1_2", "read_file", file, false)}})
	return req
}

func TestReplayPlaysInOrder(t *testing.T) {
	p, err := New(writeCassette(t, cassette))
	if err != nil {
		t.Fatal(err)
	}
	var ds []llm.Delta
	first, err := p.Stream(context.Background(), firstRequest(), func(d llm.Delta) error { ds = append(ds, d); return nil })
	if err != nil {
		t.Fatal(err)
	}
	wantDeltas := []llm.Delta{{Kind: llm.DeltaThinking, Text: "I "}, {Kind: llm.DeltaThinking, Text: "will "}, {Kind: llm.DeltaThinking, Text: "list."},
		{Kind: llm.DeltaText, Text: "Let "}, {Kind: llm.DeltaText, Text: "me "}, {Kind: llm.DeltaText, Text: "look "}, {Kind: llm.DeltaText, Text: "at "}, {Kind: llm.DeltaText, Text: "it."},
		llm.ToolCallDelta(0, "call_1", "list_dir"), llm.ToolCallDelta(1, "call_1_2", "read_file")}
	if !reflect.DeepEqual(ds, wantDeltas) {
		t.Errorf("deltas = %v", ds)
	}
	want := &llm.Response{Content: []message.Block{
		{Type: message.TypeThinking, Thinking: "I will list."}, message.Text("Let me look at it."),
		{Type: message.TypeToolUse, ID: "call_1", Name: "list_dir", Arguments: `{"path":"."}`},
		{Type: message.TypeToolUse, ID: "call_1_2", Name: "read_file", Arguments: `{"path": "a.txt"}`}},
		StopReason: llm.StopToolUse, Usage: message.Usage{InputTokens: 10, OutputTokens: 5, CacheReadTokens: 2}}
	if !reflect.DeepEqual(first, want) {
		t.Fatalf("first = %#v", first)
	}

	// "*" matches any listing; the file content must be exact.
	second, err := p.Stream(context.Background(), secondRequest(first, "a.txt\nb.txt (varies)", "hello"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if second.StopReason != event.StopMaxTokens || second.Content[0].Text != "Done." {
		t.Errorf("second = %#v", second)
	}
	third, err := p.Stream(context.Background(), &llm.Request{}, nil)
	if err != nil || third.StopReason != event.StopEndTurn || third.Content[0].Text != "no request check" {
		t.Errorf("third = %#v, %v", third, err)
	}
	_, err = p.Stream(context.Background(), &llm.Request{}, nil)
	if err == nil || !strings.HasPrefix(err.Error(), "replay: cassette ") || !strings.HasSuffix(err.Error(), "c.json has no reply #4") {
		t.Errorf("exhausted: %v", err)
	}
}

func TestReplayMismatch(t *testing.T) {
	base, err := New(writeCassette(t, cassette))
	if err != nil {
		t.Fatal(err)
	}
	first, _ := base.Stream(context.Background(), firstRequest(), nil)
	long := strings.Repeat("ü", 100)

	tests := []struct {
		name string
		req  func() *llm.Request
		want string
	}{
		{"tool result content", func() *llm.Request { return secondRequest(first, "x", "bye") },
			`message 3 (tool) block 2 content: recorded "hello", got "bye"`},
		{"long content truncated", func() *llm.Request { return secondRequest(first, "x", long) },
			`message 3 (tool) block 2 content: recorded "hello", got "` + strings.Repeat("ü", 40) + `"…`},
		{"message count", func() *llm.Request { return firstRequest() }, "recorded 3 messages, got 1"},
		{"role", func() *llm.Request {
			r := secondRequest(first, "x", "hello")
			r.Messages[2].Role = message.RoleUser
			return r
		}, `message 3 role: recorded "tool", got "user"`},
		{"block count", func() *llm.Request {
			r := secondRequest(first, "x", "hello")
			r.Messages[1].Content = r.Messages[1].Content[1:]
			return r
		}, "message 2 (assistant): recorded 4 blocks, got 3"},
		{"block type", func() *llm.Request {
			r := secondRequest(first, "x", "hello")
			r.Messages[0].Content[0] = message.Block{Type: message.TypeImage, Data: "AA", MimeType: "image/png"}
			return r
		}, `message 1 (user) block 1 type: recorded "text", got "image"`},
		{"tool arguments", func() *llm.Request {
			r := secondRequest(first, "x", "hello")
			r.Messages[1].Content[2].Arguments = `{"path":".."}`
			return r
		}, `message 2 (assistant) block 3 arguments: recorded "{\"path\":\".\"}", got "{\"path\":\"..\"}"`},
		{"error flag", func() *llm.Request {
			r := secondRequest(first, "x", "hello")
			r.Messages[2].Content[0].IsError = true
			return r
		}, `message 3 (tool) block 1 is_error: recorded (absent), got true`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeCassette(t, cassette)
			p, _ := New(path)
			if _, err := p.Stream(context.Background(), firstRequest(), nil); err != nil {
				t.Fatal(err)
			}
			_, err := p.Stream(context.Background(), tt.req(), nil)
			want := "replay: request 2 does not match cassette " + path + ": " + tt.want
			if err == nil || err.Error() != want {
				t.Fatalf("err  = %v\nwant   %s", err, want)
			}
		})
	}
}

func TestLoadCassetteErrors(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"version", `{"version": 2, "replies": []}`, "version 2, want 1"},
		{"unknown field", `{"version": 1, "replies": [{"txt": "x"}]}`, `unknown field "txt"`},
		{"bad stop reason", `{"version": 1, "replies": [{"stop_reason": "done"}]}`, `unknown stop_reason "done"`},
		{"array arguments", `{"version": 1, "replies": [{"tool_calls": [{"name": "f", "arguments": [1]}]}]}`, "want a JSON object or string"},
		{"string arguments not JSON", `{"version": 1, "replies": [{"tool_calls": [{"name": "f", "arguments": "{oops"}]}]}`, "is not JSON"},
		{"no name", `{"version": 1, "replies": [{"tool_calls": [{"arguments": {}}]}]}`, "tool call 1 has no name"},
		{"bad block", `{"version": 1, "replies": [{"request": {"messages": [{"role": "user", "content": [{"type": "video"}]}]}}]}`, `unknown content block type "video"`},
		{"not JSON", `{`, "unexpected EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadCassette(writeCassette(t, tt.body))
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "replay: ") {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
	if _, err := New(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Fatal("missing file accepted")
	}
}

func TestReplayArgumentsDefaults(t *testing.T) {
	c, err := LoadCassette(writeCassette(t, `{"version": 1, "replies": [{"tool_calls": [
		{"name": "a"}, {"name": "b", "arguments": null}, {"name": "c", "arguments": { "x" : [1, 2] }}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tc := range c.Replies[0].ToolCalls {
		got = append(got, tc.ID+" "+string(tc.Arguments))
	}
	if strings.Join(got, "|") != `call_1_1 {}|call_1_2 {}|call_1_3 {"x":[1,2]}` {
		t.Fatalf("got %q", got)
	}
}

func TestReplayCancelAndOnDeltaError(t *testing.T) {
	p, _ := New(writeCassette(t, `{"version": 1, "replies": [{"text": "a b c"}, {"text": "x"}]}`))
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	_, err := p.Stream(ctx, &llm.Request{}, func(llm.Delta) error { n++; cancel(); return nil })
	if err != context.Canceled || n != 1 {
		t.Fatalf("err = %v after %d deltas", err, n)
	}
	_, err = p.Stream(context.Background(), &llm.Request{}, func(llm.Delta) error { return os.ErrClosed })
	if err != os.ErrClosed {
		t.Fatalf("onDelta error not returned: %v", err)
	}
}

func TestReplayConcurrentCallsEachConsumeOne(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"version": 1, "replies": [`)
	for i := 0; i < 20; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"text": "r"}`)
	}
	b.WriteString(`]}`)
	p, _ := New(writeCassette(t, b.String()))
	var wg sync.WaitGroup
	errs := make(chan error, 25)
	for i := 0; i < 25; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := p.Stream(context.Background(), &llm.Request{}, nil)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	failed := 0
	for err := range errs {
		if err != nil {
			failed++
		}
	}
	if failed != 5 {
		t.Fatalf("%d calls failed, want 5", failed)
	}
}

func TestSplitWords(t *testing.T) {
	for in, want := range map[string][]string{
		"":             nil,
		"one":          {"one"},
		"a b":          {"a ", "b"},
		"  lead":       {"  ", "lead"},
		"x  y\nz\t":    {"x  ", "y\n", "z\t"},
		"héllo wörld ": {"héllo ", "wörld "},
	} {
		if got := splitWords(in); !reflect.DeepEqual(got, want) {
			t.Errorf("splitWords(%q) = %q, want %q", in, got, want)
		}
	}
}
