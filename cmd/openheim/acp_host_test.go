package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/protocol/acp/host"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm/llmtest"
)

// TestHostDrivesOpenheim: the ACP host against the real `openheim acp`
// (on the fake LLM): capabilities, a turn with a tool call, list, resume
// and load of an earlier session, close and delete.
func TestHostDrivesOpenheim(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "list_dir", Arguments: `{}`}}},
		llmtest.Reply{Text: []string{"Two files."}}, llmtest.Reply{Text: []string{"Again."}})
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	os.MkdirAll(work, 0o755)
	os.WriteFile(filepath.Join(work, "a.txt"), []byte("a"), 0o644)
	cfg := filepath.Join(dir, "config.toml")
	os.WriteFile(cfg, []byte(`default_provider = "fake"
work_dir = "`+work+`"
[providers.fake]
api_base = "`+srv.URL()+`"
default_model = "m"
`), 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	h, err := host.Start(ctx, host.AgentSpec{Name: "openheim", Command: binary(t), Args: []string{"--config", cfg, "acp"},
		Env: map[string]string{"OPENHEIM_HOME": filepath.Join(dir, "home")}}, host.Options{WorkDir: work})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	t.Logf("start to initialize: %v", time.Since(start))
	if ai := h.Info().AgentInfo; ai == nil || ai.Name != "openheim" {
		t.Fatalf("agentInfo: %+v", h.Info())
	}
	id, err := h.NewSession(ctx, host.SessionOptions{Cwd: work})
	if err != nil {
		t.Fatal(err)
	}
	turn, err := h.Prompt(ctx, id, []acp.ContentBlock{{Type: "text", Text: "What is here?"}})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for ev := range turn.Events {
		kinds = append(kinds, string(ev.Kind))
		if ev.Kind == event.ToolCallUpdate && ev.Tool.Status == event.StatusCompleted && !strings.Contains(string(ev.Tool.RawOutput), "a.txt") {
			t.Errorf("tool output: %s", ev.Tool.RawOutput)
		}
	}
	res := <-turn.Completion
	if res.Err != nil || res.Completion.StopReason != "end_turn" || res.Completion.OutputText != "Two files." {
		t.Fatalf("turn: %+v (events %v)", res, kinds)
	}
	list, err := h.ListSessions(ctx, work)
	if err != nil || len(list) != 1 || list[0].SessionID != id {
		t.Fatalf("list: %+v %v", list, err)
	}
	if err := h.CloseSession(ctx, id); err != nil {
		t.Fatal(err)
	}
	// A closed session comes back by load (replayed into the read model)
	// and takes another turn with its history.
	if err := h.Reattach(ctx, id, host.SessionOptions{Cwd: work}); err != nil {
		t.Fatal(err)
	}
	if snap, _ := h.Snapshot(id); len(snap.Thread) == 0 {
		t.Error("the load replay did not reach the read model")
	}
	turn, _ = h.Prompt(ctx, id, []acp.ContentBlock{{Type: "text", Text: "again"}})
	for range turn.Events {
	}
	if res := <-turn.Completion; res.Err != nil || res.Completion.OutputText != "Again." {
		t.Fatalf("second turn: %+v", res)
	}
	if raw := string(srv.Requests()[2].Raw); !strings.Contains(raw, "Two files.") {
		t.Error("the reloaded session lost its history")
	}
	if err := h.DeleteSession(ctx, id); err != nil {
		t.Fatal(err)
	}
	if list, _ := h.ListSessions(ctx, work); len(list) != 0 {
		t.Errorf("after delete: %+v", list)
	}
}
