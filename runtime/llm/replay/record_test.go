package replay

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/redact"
)

// fixed answers every call with the same content.
type fixed struct{ content []message.Block }

func (f fixed) Stream(_ context.Context, _ *llm.Request, on func(llm.Delta) error) (*llm.Response, error) {
	on(llm.Delta{Kind: llm.DeltaThinking, Text: "let me "})
	on(llm.Delta{Kind: llm.DeltaThinking, Text: "think"})
	on(llm.Delta{Kind: llm.DeltaText, Text: "Looking."})
	return &llm.Response{Content: f.content, StopReason: llm.StopToolUse, Usage: message.Usage{InputTokens: 7, CacheReadTokens: 3}}, nil
}

func TestRecordThenReplayIsLossless(t *testing.T) {
	sig := "sig-abc"
	content := []message.Block{
		{Type: message.TypeThinking, Thinking: "let me think", Signature: &sig},
		{Type: message.TypeRedactedThinking, Data: "opaque"},
		message.Text("Looking."),
		{Type: message.TypeToolUse, ID: "toolu_1", Name: "list_dir", Arguments: `{"path":"."}`, Signature: &sig},
	}
	path := filepath.Join(t.TempDir(), "sub", "run.json")
	rec, err := NewRecorder(fixed{content}, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req := &llm.Request{Model: "m", System: "secret system prompt", Messages: []message.Message{
		{Role: message.RoleUser, Content: []message.Block{message.Text("hi")}}}}
	got, err := rec.Stream(context.Background(), req, func(llm.Delta) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if strings.Contains(string(data), "secret system prompt") {
		t.Error("the cassette must hold messages and replies only")
	}

	replay, err := New(path)
	if err != nil {
		t.Fatal(err)
	}
	var deltas []llm.Delta
	again, err := replay.Stream(context.Background(), req, func(d llm.Delta) error { deltas = append(deltas, d); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again.Content, got.Content) || again.Usage != got.Usage || again.StopReason != got.StopReason {
		t.Fatalf("replayed %+v\nrecorded %+v", again, got)
	}
	want := []llm.Delta{{Kind: llm.DeltaThinking, Text: "let me "}, {Kind: llm.DeltaThinking, Text: "think"}, {Kind: llm.DeltaText, Text: "Looking."},
		llm.ToolCallDelta(0, "toolu_1", "list_dir")}
	if !reflect.DeepEqual(deltas, want) {
		t.Errorf("replay must stream the recorded fragments, then announce the calls: %+v", deltas)
	}
	// A different conversation is a clear mismatch, not a wrong answer.
	replay, _ = New(path)
	req.Messages[0].Content[0].Text = "bye"
	if _, err := replay.Stream(context.Background(), req, nil); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Fatalf("err = %v", err)
	}
}

func TestRecorderSkipsFailedCalls(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.json")
	rec, _ := NewRecorder(failing{}, path, nil)
	if _, err := rec.Stream(context.Background(), &llm.Request{}, nil); err == nil {
		t.Fatal("want the provider's error")
	}
	c, err := LoadCassette(path)
	if err != nil || len(c.Replies) != 0 {
		t.Fatalf("%v %+v", err, c)
	}
}

type failing struct{}

func (failing) Stream(context.Context, *llm.Request, func(llm.Delta) error) (*llm.Response, error) {
	return nil, llm.ErrStreamCut
}

// TestRecorderMasksSecrets: a secret in the conversation (a tool's output)
// or in the reply is masked in the cassette, which still loads.
func TestRecorderMasksSecrets(t *testing.T) {
	const secret = `sk-rec-"quoted"-778899`
	path := filepath.Join(t.TempDir(), "run.json")
	rec, err := NewRecorder(fixed{[]message.Block{message.Text("your key is " + secret)}}, path, redact.New(secret))
	if err != nil {
		t.Fatal(err)
	}
	req := &llm.Request{Model: "m", Messages: []message.Message{
		{Role: message.RoleUser, Content: []message.Block{message.Text("env says KEY=" + secret)}}}}
	if _, err := rec.Stream(context.Background(), req, func(llm.Delta) error { return nil }); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if strings.Contains(string(data), "rec-") || !strings.Contains(string(data), redact.Marker) {
		t.Fatalf("cassette: %s", data)
	}
	if c, err := LoadCassette(path); err != nil || len(c.Replies) != 1 {
		t.Fatalf("the masked cassette must load: %v %+v", err, c)
	}
}
