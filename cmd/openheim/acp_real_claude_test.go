//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/llm/llmtest"
)

// TestClaudeRealTurn: one real Claude Code turn through `openheim prompt
// --agent claude --json`: the model writes a file inside work_dir (Claude
// asks, openheim's rules allow it), writes one outside (refused: outside
// work_dir) and runs a command (refused by the rule deny = ["execute"]).
// The NDJSON shows each call's tool_call and its final update with the
// real arguments (Claude sends them only in a later update) and the diff;
// the stored session holds them and the results; nothing of the agent is
// left running after openheim exits; every update decoded.
func TestClaudeRealTurn(t *testing.T) {
	r := newAgentRig(t, "claude")
	notes, pwned, ran := filepath.Join(r.work, "notes.txt"), filepath.Join(r.outside, "pwned.txt"), filepath.Join(r.work, "ran.txt")
	r.srv.Enqueue(toolUse("toolu_in", "Write", map[string]any{"file_path": notes, "content": "hello\n"}),
		toolUse("toolu_out", "Write", map[string]any{"file_path": pwned, "content": "pwned"}),
		toolUse("toolu_sh", "Bash", map[string]any{"command": "touch " + ran, "description": "touch a file"}),
		llmtest.Reply{Text: []string{"All ", "done."}})
	cfg := r.config("allow_shell = true\n[permissions]\ndeny = [\"execute\"]")
	lines, code, stderr := r.prompt(cfg, "write the notes")
	if code != 0 || len(lines) < 3 || lines[len(lines)-1]["stopReason"] != "end_turn" {
		t.Fatalf("exit %d; stderr:\n%s\nlast line: %v", code, stderr, lines[len(lines)-1])
	}
	if strings.Contains(stderr, "did not decode") {
		t.Errorf("an update of Claude's did not decode:\n%s", stderr)
	}
	in := toolUpdates(lines, "toolu_in")
	if len(in) < 2 || in[0]["sessionUpdate"] != "tool_call" {
		t.Fatalf("toolu_in in the NDJSON: %v", in)
	}
	final := in[len(in)-1]
	content, _ := final["content"].([]any)
	if final["status"] != "completed" || !strings.Contains(str(final["rawInput"]), notes) || len(content) == 0 ||
		!strings.Contains(str(content[0]), `"type":"diff"`) || !strings.Contains(str(content[0]), `"newText":"hello\n"`) {
		t.Errorf("toolu_in's final update lacks the arguments or the diff: %v", final)
	}
	if b, err := os.ReadFile(notes); err != nil || string(b) != "hello\n" {
		t.Errorf("notes.txt: %q %v", b, err)
	}
	for id, path := range map[string]string{"toolu_out": pwned, "toolu_sh": ran} {
		ups := toolUpdates(lines, id)
		if len(ups) == 0 || ups[len(ups)-1]["status"] != "failed" {
			t.Errorf("%s: %v", id, ups)
		}
		if _, err := os.Stat(path); err == nil {
			t.Errorf("%s ran: %s exists", id, path)
		}
	}
	id := str(lines[0]["sessionId"])
	uses, results := r.stored(id)
	if u := uses["toolu_in"]; !strings.Contains(u.Arguments, notes) || !strings.Contains(u.Arguments, "hello") {
		t.Errorf("stored tool_use: %+v", u)
	}
	if res := results["toolu_in"]; res.IsError || !strings.Contains(res.Content, "notes.txt") {
		t.Errorf("stored result: %+v", res)
	}
	for _, id := range []string{"toolu_out", "toolu_sh"} {
		if res, ok := results[id]; !ok || !res.IsError {
			t.Errorf("stored result of %s: %+v", id, res)
		}
	}
	if left := r.waitGone(3 * time.Second); len(left) > 0 {
		t.Errorf("agent processes left after openheim exited: %v", left)
	}
}

// TestClaudeRealExitPaths: Claude Code's processes (node and claude) end
// with openheim however it ends (exitPaths).
func TestClaudeRealExitPaths(t *testing.T) { exitPaths(t, "claude") }
