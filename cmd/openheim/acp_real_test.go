//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openheim/openheim/protocol/acp/host/acptest"
	"github.com/openheim/openheim/runtime/llm/llmtest"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
)

// Real turns of the real agents from npm (testdata/acp: claude-agent-acp
// and codex-acp, pinned by the lockfile), driven by the real openheim
// binary, offline: Claude Code talks to the fake Anthropic Messages
// server, Codex to the fake OpenAI Responses server (FIELD-NOTES, "Real
// peers from npm"). Every agent process carries a marker in its
// environment, so a test can find in /proc whatever of it is left.

// agentRig is one real agent behind `openheim prompt --agent NAME`.
type agentRig struct {
	t         *testing.T
	name      string // the [acp_agents] name: claude or codex
	srv       *llmtest.Server
	dir, work string
	outside   string // a folder beside work_dir
	home      string // OPENHEIM_HOME
	mark      string // OPENHEIM_TEST_AGENT in the agent's environment
	agentCmd  string
	agentEnv  map[string]string
	userHome  string
}

func newAgentRig(t *testing.T, name string) *agentRig {
	t.Helper()
	npm := map[string]string{"claude": "claude-agent-acp", "codex": "codex-acp"}[name]
	command, _ := acptest.NPMAgent(t, npm)
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	r := &agentRig{t: t, name: name, srv: llmtest.New(), dir: dir, work: filepath.Join(dir, "work"), outside: filepath.Join(dir, "outside"),
		home: filepath.Join(dir, "home"), userHome: filepath.Join(dir, "user"), agentCmd: command,
		mark: fmt.Sprintf("%s-%d-%d", name, os.Getpid(), time.Now().UnixNano())}
	t.Cleanup(r.srv.Close)
	for _, d := range []string{r.work, r.outside, r.userHome} {
		os.MkdirAll(d, 0o755)
	}
	r.agentEnv = map[string]string{"OPENHEIM_TEST_AGENT": r.mark}
	switch name {
	case "claude":
		for k, v := range map[string]string{"ANTHROPIC_BASE_URL": strings.TrimSuffix(r.srv.URL(), "/v1"), "ANTHROPIC_API_KEY": "test-key",
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1",
			"DISABLE_ERROR_REPORTING": "1", "IS_SANDBOX": "1"} {
			r.agentEnv[k] = v
		}
	case "codex":
		r.agentEnv["CODEX_HOME"] = codexHome(t, r.srv.URL())
		r.agentEnv["FAKE_API_KEY"] = "test-key"
	}
	t.Cleanup(func() { r.killLeft() })
	return r
}

// codexHome is a CODEX_HOME whose config points Codex at the fake
// Responses server. Not under the temp dir: Codex refuses to set up its
// helpers there.
func codexHome(t *testing.T, baseURL string) string {
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(cache, 0o755)
	home, err := os.MkdirTemp(cache, "openheim-e2e-codex-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	cfg := fmt.Sprintf(`model_provider = "fake"
model = "gpt-fake"
[model_providers.fake]
name = "fake"
base_url = %q
env_key = "FAKE_API_KEY"
wire_api = "responses"
[features]
plugins = false
remote_plugin = false
[analytics]
enabled = false
`, baseURL)
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}

// config writes openheim's config: work_dir, the agent, and extra TOML
// (allow_shell, [permissions]) placed before the tables.
func (r *agentRig) config(extra string) string {
	var env []string
	for k, v := range r.agentEnv {
		env = append(env, fmt.Sprintf("%s = %q", k, v))
	}
	path := filepath.Join(r.dir, fmt.Sprintf("config-%d.toml", time.Now().UnixNano()))
	text := fmt.Sprintf("work_dir = %q\n%s\n[acp_agents.%s]\ncommand = %q\nenv = { %s }\n", r.work, extra, r.name, r.agentCmd, strings.Join(env, ", "))
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		r.t.Fatal(err)
	}
	return path
}

// command is `openheim --config cfg args...` as a user runs it: a clean
// environment with its own HOME (no one's credentials or settings).
func (r *agentRig) command(cfg string, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	cmd := exec.Command(binary(r.t), append([]string{"--config", cfg}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + r.userHome, "OPENHEIM_HOME=" + r.home, "TERM=dumb", "LANG=C.UTF-8"}
	cmd.Dir = r.work
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	return cmd, &out, &errOut
}

// prompt runs `prompt --agent NAME --json args...` to its end.
func (r *agentRig) prompt(cfg string, args ...string) (lines []map[string]any, code int, stderr string) {
	r.t.Helper()
	cmd, out, errOut := r.command(cfg, append([]string{"prompt", "--agent", r.name, "--json"}, args...)...)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-ctx.Done():
		cmd.Process.Kill()
		<-done
		r.t.Fatalf("openheim prompt did not end; stderr:\n%s", errOut)
	}
	return ndjsonLines(r.t, out.Bytes()), cmd.ProcessState.ExitCode(), errOut.String()
}

func ndjsonLines(t *testing.T, out []byte) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for _, l := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("not JSON: %s", l)
		}
		lines = append(lines, m)
	}
	return lines
}

// toolUpdates are the NDJSON updates about tool call id, in order.
func toolUpdates(lines []map[string]any, id string) []map[string]any {
	var out []map[string]any
	for _, l := range lines {
		if u, ok := l["update"].(map[string]any); ok && u["toolCallId"] == id {
			out = append(out, u)
		}
	}
	return out
}

// stored is the stored session's tool calls and results by call id.
func (r *agentRig) stored(id string) (uses, results map[string]message.Block) {
	r.t.Helper()
	s, err := session.NewFileStore(filepath.Join(r.home, "history"))
	if err != nil {
		r.t.Fatal(err)
	}
	conv, err := s.Load(id)
	if err != nil {
		r.t.Fatal(err)
	}
	uses, results = map[string]message.Block{}, map[string]message.Block{}
	for _, m := range conv.Messages {
		for _, b := range m.Content {
			switch b.Type {
			case message.TypeToolUse:
				uses[b.ID] = b
			case message.TypeToolResult:
				results[b.ToolCallID] = b
			}
		}
	}
	return uses, results
}

// agentProcs are the live (not zombie) processes of this rig's agent: those
// whose environment holds its marker.
func (r *agentRig) agentProcs() []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	want := []byte("OPENHEIM_TEST_AGENT=" + r.mark + "\x00")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(env, want) {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		rest := string(stat[bytes.LastIndexByte(stat, ')')+1:])
		if f := strings.Fields(rest); len(f) > 0 && f[0] != "Z" {
			comm, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
			out = append(out, fmt.Sprintf("%d:%s", pid, strings.TrimSpace(string(comm))))
		}
	}
	return out
}

// waitGone waits up to d for the agent's processes to be gone and returns
// what is left.
func (r *agentRig) waitGone(d time.Duration) []string {
	deadline := time.Now().Add(d)
	for {
		left := r.agentProcs()
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// killLeft kills what a failed test left running.
func (r *agentRig) killLeft() {
	for _, p := range r.agentProcs() {
		pid, _ := strconv.Atoi(strings.SplitN(p, ":", 2)[0])
		if pid > 0 {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// exitPaths ends `openheim prompt --agent NAME` in every way it can end
// while the model is answering, and `chat --agent NAME` by the end of its
// input: the agent's processes are gone within the grace period each time.
// Cancelling sends session/cancel and the turn ends with stopReason
// cancelled.
func exitPaths(t *testing.T, name string) {
	endings := []struct {
		name     string
		signals  []syscall.Signal
		wantCode int
		stop     string // the result line's stopReason ("" when there is none)
	}{
		{"Ctrl-C cancels", []syscall.Signal{syscall.SIGINT}, 130, "cancelled"},
		{"SIGTERM", []syscall.Signal{syscall.SIGTERM}, 143, "cancelled"},
		{"second Ctrl-C", []syscall.Signal{syscall.SIGINT, syscall.SIGINT}, 130, ""},
		{"kill -9 (as a panic ends it)", []syscall.Signal{syscall.SIGKILL}, -1, ""},
	}
	for _, e := range endings {
		t.Run(e.name, func(t *testing.T) {
			r := newAgentRig(t, name)
			r.srv.Enqueue(llmtest.Reply{Text: []string{"thinking it over"}, Hang: true})
			cmd, out, errOut := r.command(r.config(""), "prompt", "--agent", name, "--json", "take your time")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(90 * time.Second)
			for r.srv.Hanging() == 0 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if r.srv.Hanging() == 0 {
				cmd.Process.Kill()
				t.Fatalf("the model was never asked; stderr:\n%s", errOut)
			}
			start := time.Now()
			for i, s := range e.signals {
				if i > 0 {
					time.Sleep(50 * time.Millisecond)
				}
				cmd.Process.Signal(s)
			}
			cmd.Wait()
			took := time.Since(start)
			if code := cmd.ProcessState.ExitCode(); code != e.wantCode {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, e.wantCode, errOut)
			}
			if e.stop != "" {
				lines := ndjsonLines(t, out.Bytes())
				if last := lines[len(lines)-1]; last["stopReason"] != e.stop {
					t.Errorf("last line %v, want stopReason %s", last, e.stop)
				}
			}
			if left := r.waitGone(3 * time.Second); len(left) > 0 {
				t.Errorf("agent processes left after openheim exited (%v after the signal): %v", took, left)
			}
			t.Logf("%s: openheim exited %v after the signal", e.name, took.Round(time.Millisecond))
		})
	}
	t.Run("chat: end of input", func(t *testing.T) {
		r := newAgentRig(t, name)
		r.srv.Enqueue(llmtest.Reply{Text: []string{"Hello."}})
		cmd, out, errOut := r.command(r.config(""), "chat", "--agent", name)
		cmd.Stdin = strings.NewReader("hi\n")
		if err := cmd.Run(); err != nil {
			t.Fatalf("chat: %v\n%s", err, errOut)
		}
		if !strings.Contains(out.String(), "Hello.") {
			t.Errorf("chat printed %q", out)
		}
		if left := r.waitGone(3 * time.Second); len(left) > 0 {
			t.Errorf("agent processes left after chat's input ended: %v", left)
		}
	})
}

func toolUse(id, name string, input map[string]any) llmtest.Reply {
	b, _ := json.Marshal(input)
	return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: id, Name: name, Arguments: string(b)}}}
}

func str(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case nil:
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}
