//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/llm/llmtest"
)

// command is a Codex exec_command: Codex (approval "untrusted", as
// openheim starts it) asks openheim before it runs anything not on its
// short list of safe commands.
func command(id, cmd, workdir string) llmtest.Reply {
	args := map[string]any{"cmd": cmd}
	if workdir != "" {
		args["workdir"] = workdir
	}
	return toolUse(id, "exec_command", args)
}

// sandboxMissing reports whether a Codex command's final update says its
// sandbox could not start for want of bubblewrap, which is only allowed
// off CI (.ci/run installs it).
func sandboxMissing(final map[string]any) bool {
	if _, err := exec.LookPath("bwrap"); err == nil || os.Getenv("CI") != "" {
		return false
	}
	return final["status"] == "failed" && strings.Contains(str(final["rawOutput"]), "bubblewrap")
}

// TestCodexRealTurn: real Codex turns through `openheim prompt --agent
// codex --json`. Codex asks before each command. openheim allows one in
// work_dir (it runs) and one that fails; the NDJSON shows each call's
// tool_call (Codex asks before it announces a call, so openheim announces
// it from the question, with Codex's description as its content) and its
// final update with the real arguments, and the failed one is stored failed with its output. Then
// openheim refuses a command whose directory is outside work_dir, and one
// the rule deny = ["execute"] refuses: neither runs, each is stored failed
// as refused, and Codex, given "abort" (its only way to say no), ends the
// turn cancelled: exit code 3, not Ctrl-C's 130. Nothing of Codex is left
// running after each run.
func TestCodexRealTurn(t *testing.T) {
	r := newAgentRig(t, "codex")
	inside := filepath.Join(r.work, "inside.txt")
	r.srv.Enqueue(command("call_in", "echo hi > inside.txt", ""), command("call_fail", "echo oops >&2; exit 3", ""),
		llmtest.Reply{Text: []string{"done"}})
	lines, code, stderr := r.prompt(r.config("allow_shell = true"), "do the work")
	if code != 0 || len(lines) < 3 || lines[len(lines)-1]["stopReason"] != "end_turn" {
		t.Fatalf("exit %d; stderr:\n%s\nlines: %v", code, stderr, lines)
	}
	if strings.Contains(stderr, "did not decode") {
		t.Errorf("an update of Codex's did not decode:\n%s", stderr)
	}
	in := toolUpdates(lines, "call_in")
	if len(in) < 2 || in[0]["sessionUpdate"] != "tool_call" {
		t.Fatalf("call_in in the NDJSON: %v\nstderr: %s", in, stderr)
	}
	// The tool_call has Codex's description of the command (its content),
	// the final update the arguments Codex ran it with.
	if content, _ := in[0]["content"].([]any); len(content) == 0 || !strings.Contains(str(content), "inside.txt") {
		t.Errorf("call_in's tool_call lacks its content: %v", in[0])
	}
	final := in[len(in)-1]
	if !strings.Contains(str(final["rawInput"]), "inside.txt") || strings.Contains(str(final["rawOutput"]), "refused") {
		t.Errorf("call_in's final update lacks the arguments, or the call was refused: %v", final)
	}
	if sandboxMissing(final) {
		// Without bubblewrap Codex sometimes runs an approved command in its
		// sandbox anyway, which then cannot start: the call was allowed and
		// ran, the command did not.
		t.Logf("bubblewrap is missing: Codex ran the allowed command in a sandbox that cannot start")
	} else if b, err := os.ReadFile(inside); err != nil || strings.TrimSpace(string(b)) != "hi" || final["status"] != "completed" {
		t.Errorf("the allowed command did not run: %q %v\nits final update: %v", b, err, final)
	}
	fail := toolUpdates(lines, "call_fail")
	if len(fail) == 0 {
		t.Fatalf("call_fail not in the NDJSON")
	}
	// Under load codex-acp sometimes sends a command's end after its
	// answer to session/prompt, out of the turn (seen here once in six
	// runs at load 5; agentclientprotocol/codex-acp#365). openheim waits
	// half a second for it (lateCallGrace); later than that the turn ends
	// with the call in progress, and there is no failure to check.
	outOfTurn := fail[len(fail)-1]["status"] == "in_progress" && len(fail) > 1
	if outOfTurn {
		t.Logf("codex-acp sent call_fail's end out of the turn: %v", fail[len(fail)-1])
	} else if fail[len(fail)-1]["status"] != "failed" {
		t.Fatalf("call_fail in the NDJSON: %v", fail)
	}
	uses, results := r.stored(str(lines[0]["sessionId"]))
	if !strings.Contains(uses["call_in"].Arguments, "echo hi > inside.txt") || results["call_in"].IsError != (final["status"] == "failed") {
		t.Errorf("stored call_in: %+v %+v", uses["call_in"], results["call_in"])
	}
	if res := results["call_fail"]; outOfTurn && (!res.IsError || !strings.Contains(res.Content, "the turn ended first")) {
		t.Errorf("the call the turn ended before is not stored as such: %+v", res)
	} else if !outOfTurn && (!res.IsError || !strings.Contains(res.Content, "oops") && !sandboxMissing(fail[len(fail)-1])) {
		t.Errorf("the failed command is not stored failed with its output: %+v", res)
	}
	if left := r.waitGone(3 * time.Second); len(left) > 0 {
		t.Errorf("agent processes left after openheim exited: %v", left)
	}
	refused := []struct {
		name, extra, id, cmd, dir, file string
	}{
		{"outside work_dir", "allow_shell = true", "call_out", "echo pwned > pwned.txt", r.outside, filepath.Join(r.outside, "pwned.txt")},
		{"deny execute", "allow_shell = true\n[permissions]\ndeny = [\"execute\"]", "call_deny", "echo no > denied.txt", "", filepath.Join(r.work, "denied.txt")},
	}
	for _, c := range refused {
		r.srv.Reset() // Codex makes no more requests once it aborted a turn
		r.srv.Enqueue(command(c.id, c.cmd, c.dir), llmtest.Reply{Text: []string{"giving up"}})
		lines, code, stderr := r.prompt(r.config(c.extra), "try "+c.name)
		if code != 3 || lines[len(lines)-1]["stopReason"] != "cancelled" {
			t.Errorf("%s: exit %d, last line %v; stderr:\n%s", c.name, code, lines[len(lines)-1], stderr)
		}
		if ups := toolUpdates(lines, c.id); len(ups) < 2 || ups[0]["sessionUpdate"] != "tool_call" || ups[len(ups)-1]["status"] != "failed" {
			t.Errorf("%s: %s in the NDJSON: %v", c.name, c.id, ups)
		}
		if _, err := os.Stat(c.file); err == nil {
			t.Errorf("%s: the refused command ran", c.name)
		}
		_, results := r.stored(str(lines[0]["sessionId"]))
		if res := results[c.id]; !res.IsError || !strings.Contains(res.Content, "refused") {
			t.Errorf("%s: stored result %+v", c.name, res)
		}
		if left := r.waitGone(3 * time.Second); len(left) > 0 {
			t.Errorf("%s: agent processes left after openheim exited: %v", c.name, left)
		}
	}
}

// TestCodexRealExitPaths: Codex's processes (the node wrapper and the
// codex-acp binary) end with openheim however it ends (exitPaths).
func TestCodexRealExitPaths(t *testing.T) { exitPaths(t, "codex") }
