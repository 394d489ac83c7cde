//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openheim/openheim/protocol/acp/host/acptest"
)

// chatAgentEnv is a config whose [acp_agents.fake] is the scripted fake
// agent run as a real process (this test binary, see TestMain), marked so
// that its process can be found in /proc.
func chatAgentEnv(t *testing.T, s acptest.Script) (home, cfg, mark string) {
	dir := t.TempDir()
	home, work := filepath.Join(dir, "home"), filepath.Join(dir, "work")
	os.MkdirAll(work, 0o755)
	cmd, args, env := acptest.Command(s)
	mark = fmt.Sprintf("chat-%d-%d", os.Getpid(), time.Now().UnixNano())
	var script string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, acptest.EnvVar+"="); ok {
			script = v
		}
	}
	argv, _ := json.Marshal(args)
	cfg = filepath.Join(dir, "config.toml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("work_dir = %q\n[acp_agents.fake]\ncommand = %q\nargs = %s\nenv = { %s = %q, OPENHEIM_TEST_AGENT = %q, GORACE = \"atexit_sleep_ms=0\" }\n",
		work, cmd, argv, acptest.EnvVar, script, mark)), 0o600)
	return home, cfg, mark
}

// markedProcs are the live processes whose environment holds mark.
func markedProcs(mark string) []string {
	r := &agentRig{mark: mark}
	return r.agentProcs()
}

func waitNoMarked(mark string, d time.Duration) []string {
	r := &agentRig{mark: mark}
	return r.waitGone(d)
}

// TestChatAgentCtrlDAfterPermission: in `chat --agent`, a permission
// question answered, the turn done, Ctrl-D quits, and the agent (which,
// like Claude Code and Codex, ignores the end of its input) is gone.
// SIGTERM while a question is open quits too, as fast.
func TestChatAgentCtrlDAfterPermission(t *testing.T) {
	ask := json.RawMessage(`{"toolCall":{"toolCallId":"w1","title":"Write notes.txt","kind":"edit","status":"pending","rawInput":{"file_path":"notes.txt"}},` +
		`"options":[{"optionId":"allow-once","name":"Allow","kind":"allow_once"},{"optionId":"reject-once","name":"Reject","kind":"reject_once"}]}`)
	script := acptest.Script{AskPermission: &ask, IgnoreEOF: true, Updates: []json.RawMessage{acptest.TextChunk("All done.")}}
	for _, end := range []string{"Ctrl-D", "SIGTERM at the question"} {
		t.Run(end, func(t *testing.T) {
			home, cfg, mark := chatAgentEnv(t, script)
			tm := startTerm(t, home, []string{"NO_COLOR=1"}, "--config", cfg, "chat", "--agent", "fake")
			tm.expect(`› *$`)
			tm.send("write the notes\r")
			tm.expect(`allow .*notes\.txt\?`)
			tm.expect(`\[y\] once .* › *$`)
			if len(markedProcs(mark)) == 0 {
				t.Fatal("the agent's process was not found")
			}
			start := time.Now()
			if end == "Ctrl-D" {
				tm.send("y\r")
				tm.expect(`permission: allow-once`)
				tm.expect(`All done\.`)
				tm.expect(`› *$`)
				start = time.Now()
				tm.send("\x04")
			} else {
				tm.cmd.Process.Signal(syscall.SIGTERM)
			}
			if code := tm.wait(); code != 0 {
				t.Errorf("exit code %d", code)
			}
			if left := waitNoMarked(mark, 3*time.Second); len(left) > 0 {
				t.Errorf("the agent outlived chat: %v", left)
			}
			t.Logf("%s: chat exited %v later", end, time.Since(start).Round(time.Millisecond))
		})
	}
}

// TestPromptAgentNDJSON: the scripted fake agent's tool calls, with list
// content (a diff, a text block, a terminal) and locations, come out of
// `prompt --agent fake --json` as the agent sent them, and the final update
// of a call carries what updates changed since its tool_call (not its kind,
// which did not change).
func TestPromptAgentNDJSON(t *testing.T) {
	sent := []string{
		`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Edit","kind":"edit","status":"pending","rawInput":{},"content":[],"locations":[]}`,
		`{"sessionUpdate":"tool_call_update","toolCallId":"c1","title":"Edit a.txt","rawInput":{"file_path":"/w/a.txt"},"content":[{"type":"diff","path":"/w/a.txt","oldText":"a\n","newText":"b\n"},{"type":"content","content":{"type":"text","text":"one line changed"}}],"locations":[{"path":"/w/a.txt","line":1}]}`,
		`{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"completed","rawOutput":"ok"}`,
		`{"sessionUpdate":"tool_call","toolCallId":"c2","title":"make","kind":"execute","status":"in_progress","content":[{"type":"terminal","terminalId":"term-1"}]}`,
	}
	var ups []json.RawMessage
	for _, s := range sent {
		ups = append(ups, json.RawMessage(s))
	}
	home, cfg, mark := chatAgentEnv(t, acptest.Script{Updates: ups})
	cmd := exec.Command(binary(t), "--config", cfg, "prompt", "--agent", "fake", "--json", "edit it")
	cmd.Env = append(os.Environ(), "OPENHEIM_HOME="+home)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("prompt: %v", err)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var line struct {
			Update json.RawMessage `json:"update"`
		}
		json.Unmarshal([]byte(l), &line)
		if strings.Contains(string(line.Update), `"toolCallId"`) {
			got = append(got, canonical(t, line.Update))
		}
	}
	if len(got) != len(sent) {
		t.Fatalf("%d tool call lines, want %d:\n%s", len(got), len(sent), out)
	}
	for _, i := range []int{0, 1, 3} {
		if want := canonical(t, json.RawMessage(sent[i])); got[i] != want {
			t.Errorf("line %d:\n got %s\nwant %s", i, got[i], want)
		}
	}
	final := canonical(t, json.RawMessage(`{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"completed","rawOutput":"ok","title":"Edit a.txt","rawInput":{"file_path":"/w/a.txt"},"content":[{"type":"diff","path":"/w/a.txt","oldText":"a\n","newText":"b\n"},{"type":"content","content":{"type":"text","text":"one line changed"}}],"locations":[{"path":"/w/a.txt","line":1}]}`))
	if got[2] != final {
		t.Errorf("final update:\n got %s\nwant %s", got[2], final)
	}
	if left := waitNoMarked(mark, 3*time.Second); len(left) > 0 {
		t.Errorf("the agent outlived prompt: %v", left)
	}
}

func canonical(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("bad JSON %s", raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
