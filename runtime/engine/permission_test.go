package engine

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/openheim/openheim/runtime/llm/llmtest"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/permission"
	"github.com/openheim/openheim/runtime/session"
)

func TestPromptPermissions(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	write := llmtest.ToolCall{ID: "w", Name: "write_file", Arguments: `{"path":"a.txt","content":"x"}`}
	edit := llmtest.ToolCall{ID: "e", Name: "edit_file", Arguments: `{"path":"b.txt","old_string":"1","new_string":"2"}`}
	srv.Enqueue(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{write, edit}}, llmtest.Reply{Text: []string{"done"}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{edit}}, llmtest.Reply{Text: []string{"done"}},
	)
	cfg := load(t, `
[providers.local]
api_base = "`+srv.URL()+`"
default_model = "m"
[permissions]
deny = ["write_file"]
`)
	os.WriteFile(filepath.Join(cfg.WorkDir, "b.txt"), []byte("1"), 0o600)
	store, _ := session.NewFileStore(t.TempDir())
	e := &Engine{Config: cfg, Store: store}
	var mu sync.Mutex
	var asked []permission.Request
	asker := permission.AskerFunc(func(_ context.Context, r permission.Request) (permission.Outcome, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, r)
		return permission.AllowAlways, nil
	})
	meta, end, err := e.Prompt(context.Background(), Request{Input: []message.Block{message.Text("go")}, Gate: Asking(asker)})
	if err != nil || end.Err != nil {
		t.Fatalf("%v %v", err, end.Err)
	}
	if _, err := os.Stat(filepath.Join(cfg.WorkDir, "a.txt")); !os.IsNotExist(err) {
		t.Error("denied write_file ran")
	}
	if b, _ := os.ReadFile(filepath.Join(cfg.WorkDir, "b.txt")); string(b) != "2" {
		t.Errorf("allowed edit_file did not run: %q", b)
	}
	if len(asked) != 1 || asked[0].Tool != "edit_file" || asked[0].Kind != "edit" || asked[0].SessionID != meta.ID || asked[0].ToolCallID != "e" {
		t.Fatalf("asked %+v", asked)
	}
	conv, _ := store.Load(meta.ID)
	if r := conv.Messages[2].Content[0]; r.Content != permission.DeniedResult || !r.IsError {
		t.Errorf("write_file result = %+v", r)
	}

	// The next turn on the session remembers the "always" answer, even with
	// an asker that would refuse.
	os.WriteFile(filepath.Join(cfg.WorkDir, "b.txt"), []byte("1"), 0o600)
	if _, _, err := e.Prompt(context.Background(), Request{SessionID: meta.ID, Input: []message.Block{message.Text("again")}, Gate: Asking(permission.DenyAsker)}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(cfg.WorkDir, "b.txt")); string(b) != "2" {
		t.Errorf("remembered edit_file did not run: %q", b)
	}
	if len(asked) != 1 {
		t.Errorf("asked again: %+v", asked)
	}
}
