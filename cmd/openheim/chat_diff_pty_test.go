package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openheim/openheim/runtime/llm/llmtest"
)

// A permission question about an edit shows the unified diff first, in
// colour, cut to its head with [d] showing the rest; the answer is one key.
func TestChatREPLPermissionShowsTheDiff(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	var lines []string
	for i := 1; i <= 60; i++ {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	old := strings.Join(lines, "\n") + "\n"
	edit := `{"path":"notes.txt","old_string":"line 2\nline 3\n","new_string":"line two\nline three\n"}`
	// A rewrite of every line: a diff longer than the question shows.
	rewrite := strings.ReplaceAll(old, "line", "LINE")
	srv.Enqueue(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "e1", Name: "edit_file", Arguments: edit}}},
		llmtest.Reply{Text: []string{"Edited."}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "w1", Name: "write_file", Arguments: fmt.Sprintf(`{"path":"notes.txt","content":%q}`, rewrite)}}},
		llmtest.Reply{Text: []string{"Rewrote."}},
	)
	home, cfg, work := chatEnv(t, srv, "")
	os.WriteFile(filepath.Join(work, "notes.txt"), []byte(old), 0o644)
	tm := startTerm(t, home, nil, "--config", cfg, "chat")
	tm.expect(`› *$`)
	tm.send("Fix the numbers\r")
	tm.expect(`notes\.txt \+2 -2\n\s*@@ -1,6 \+1,6 @@\n\s* line 1\n\s*-line 2\n\s*-line 3\n\s*\+line two\n\s*\+line three\n\s* line 4`)
	tm.expect(`allow edit_file notes\.txt\?`)
	if raw := tm.raw(); !strings.Contains(raw, "\x1b[31m-line 2") || !strings.Contains(raw, "\x1b[32m+line two") {
		t.Errorf("the diff is not coloured: %q", raw[strings.LastIndex(raw, "@@ -1,6"):])
	}
	tm.send("y")
	tm.expect(`allowed once`)
	tm.expect(`✓ edit_file notes\.txt · \+2 −2 · `)
	tm.expect(`Edited\.`)
	tm.expect(`› *$`)
	if data, _ := os.ReadFile(filepath.Join(work, "notes.txt")); !strings.HasPrefix(string(data), "line 1\nline two\nline three\nline 4\n") {
		t.Fatalf("notes.txt: %q", data)
	}

	tm.send("Rewrite it\r")
	tm.expect(`notes\.txt \+60 -60`)
	tm.expect(`… \d+ more lines · \[d\] shows the whole diff`)
	tm.expect(`\[d\] whole diff +› *$`)
	if strings.Contains(tm.screen()[tm.seen-200:], "LINE 60") {
		t.Fatal("the head of a long diff shows its end")
	}
	tm.send("d")
	tm.expect(`\+LINE 60\n`)
	tm.expect(`\[d\] whole diff +› *$`)
	tm.send("a")
	tm.expect(`allowed for this session`)
	tm.expect(`Rewrote\.`)
	tm.expect(`› *$`)
	tm.send("\x04")
	if code := tm.wait(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
}
