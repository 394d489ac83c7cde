//go:build unix

package llmtest_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/llm/llmtest"
)

// The real codex-acp (npm @zed-industries/codex-acp, testdata/acp) runs
// turns against the fake Responses server: Codex's own Responses client
// decides whether the fake speaks the wire (FIELD-NOTES, "Real peers from
// npm"). The test speaks ACP to it over stdio with a few lines of
// JSON-RPC: runtime may not import protocol.

// TestCodexRealTurns: a turn answered with text, and a turn where the model
// calls Codex's shell tool (arguments split over deltas), Codex runs the
// command and sends its output back, and the model answers.
func TestCodexRealTurns(t *testing.T) {
	cmd := codexCommand(t)
	srv := llmtest.New()
	defer srv.Close()
	work := t.TempDir()
	c := startCodex(t, cmd, srv.URL())

	c.call(t, "initialize", map[string]any{"protocolVersion": 1,
		"clientCapabilities": map[string]any{"fs": map[string]any{"readTextFile": false, "writeTextFile": false}, "terminal": false}})
	var sess struct {
		SessionID string `json:"sessionId"`
	}
	c.decode(t, c.call(t, "session/new", map[string]any{"cwd": work, "mcpServers": []any{}}), &sess)

	srv.Enqueue(llmtest.Reply{Thinking: []string{"The user ", "greets."}, Encrypted: "ENC-1",
		Text: []string{"Hello from ", "the fake."}, Usage: &llmtest.Usage{Prompt: 50, Completion: 9}})
	stop := c.prompt(t, sess.SessionID, "say hello")
	if stop != "end_turn" || !strings.Contains(c.text(), "Hello from the fake.") {
		t.Fatalf("turn 1: stop %q, text %q; stderr: %s", stop, c.text(), c.stderr())
	}
	reqs := srv.Requests()
	first := reqs[len(reqs)-1]
	if first.Path != "/v1/responses" || first.Body["stream"] != true || lastUserText(first.Body) != "say hello" {
		t.Fatalf("Codex asked %s: %.300s", first.Path, first.Raw)
	}

	// Turn 2: the shell tool, as Codex declared it in turn 1's request.
	name, args := shellCall(t, first.Body, "echo codex-ran > marker.txt")
	t.Logf("Codex shell tool: %s %s; %d requests so far", name, args, len(reqs))
	srv.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "call_shell_1", Name: name, Arguments: args, Split: 5}}},
		llmtest.Reply{Text: []string{"The command ran."}})
	c.reset()
	stop = c.prompt(t, sess.SessionID, "run it")
	if stop != "end_turn" || !strings.Contains(c.text(), "The command ran.") {
		t.Fatalf("turn 2: stop %q, text %q; stderr: %s", stop, c.text(), c.stderr())
	}
	if b, err := os.ReadFile(filepath.Join(work, "marker.txt")); err != nil || strings.TrimSpace(string(b)) != "codex-ran" {
		t.Errorf("the command did not run in %s: %q, %v", work, b, err)
	}
	reqs = srv.Requests()
	after := reqs[len(reqs)-1]
	if !strings.Contains(string(after.Raw), `"type":"function_call_output"`) || !strings.Contains(string(after.Raw), `"call_id":"call_shell_1"`) {
		t.Errorf("Codex did not send the call's output back: %.600s", after.Raw)
	}
	// The encrypted reasoning of turn 1 went back as Codex keeps it.
	if !strings.Contains(string(after.Raw), `"encrypted_content":"ENC-1"`) {
		t.Errorf("the encrypted reasoning did not come back: %.600s", after.Raw)
	}
	if !c.sawToolCall() {
		t.Errorf("no tool_call update reached the client")
	}
}

// codexCommand is the installed codex-acp, or a skip (a failure under CI,
// which installs it).
func codexCommand(t *testing.T) string {
	t.Helper()
	dir, _ := os.Getwd()
	for ; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		if filepath.Dir(dir) == dir {
			t.Fatal("no go.mod above the test")
		}
	}
	bin := filepath.Join(dir, "testdata", "acp", "node_modules", ".bin", "codex-acp")
	_, err := os.Stat(bin)
	if err == nil {
		_, err = exec.LookPath("node")
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("codex-acp is not installed (npm ci --prefix testdata/acp): %v", err)
		}
		t.Skipf("codex-acp is not installed (npm ci --prefix testdata/acp): %v", err)
	}
	return bin
}

// lastUserText is the text of the last user message of a Responses
// request: Codex's first user message is its environment context.
func lastUserText(body map[string]any) string {
	input, _ := body["input"].([]any)
	for i := len(input) - 1; i >= 0; i-- {
		m, _ := input[i].(map[string]any)
		if m["role"] != "user" {
			continue
		}
		content, _ := m["content"].([]any)
		var text strings.Builder
		for _, p := range content {
			part, _ := p.(map[string]any)
			s, _ := part["text"].(string)
			text.WriteString(s)
		}
		return text.String()
	}
	return ""
}

// shellCall finds Codex's shell tool in a request and the arguments that
// run command with it: Codex names and shapes it by model family (shell
// with an argv array, shell_command or exec_command with a string).
func shellCall(t *testing.T, body map[string]any, command string) (string, string) {
	tools, _ := body["tools"].([]any)
	var names []string
	for _, tl := range tools {
		tool, _ := tl.(map[string]any)
		name, _ := tool["name"].(string)
		names = append(names, name)
		props, _ := tool["parameters"].(map[string]any)["properties"].(map[string]any)
		switch {
		case name == "shell" && props["command"] != nil:
			b, _ := json.Marshal(map[string]any{"command": []string{"bash", "-lc", command}})
			return name, string(b)
		case name == "shell_command" && props["command"] != nil:
			b, _ := json.Marshal(map[string]any{"command": command})
			return name, string(b)
		case name == "exec_command" && props["cmd"] != nil:
			b, _ := json.Marshal(map[string]any{"cmd": command})
			return name, string(b)
		}
	}
	t.Fatalf("no shell tool among %v", names)
	return "", ""
}

// acpClient is the test's side of one codex-acp process.
type acpClient struct {
	in     io.Writer
	out    *bufio.Reader
	cmd    *exec.Cmd
	errBuf *lockedBuffer
	next   int
	mu     sync.Mutex
	chunks strings.Builder
	tools  int
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() < 64<<10 {
		l.b.Write(p)
	}
	return len(p), nil
}

func startCodex(t *testing.T, bin, baseURL string) *acpClient {
	t.Helper()
	// CODEX_HOME outside the temp dir: Codex refuses to set up its helpers
	// under it.
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(cache, 0o755)
	codexHome, err := os.MkdirTemp(cache, "openheim-llmtest-codex-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(codexHome) })
	config := fmt.Sprintf(`model_provider = "fake"
model = "gpt-fake"
approval_policy = "never"
sandbox_mode = "danger-full-access"
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
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "CODEX_HOME=" + codexHome, "FAKE_API_KEY=test-key", "TERM=dumb"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	c := &acpClient{in: in, out: bufio.NewReaderSize(out, 1<<20), cmd: cmd, errBuf: &lockedBuffer{}}
	cmd.Stderr = c.errBuf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Neither agent exits on stdin EOF: end the whole process group.
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	return c
}

func (c *acpClient) stderr() string {
	c.errBuf.mu.Lock()
	defer c.errBuf.mu.Unlock()
	return c.errBuf.b.String()
}

func (c *acpClient) send(t *testing.T, msg map[string]any) {
	msg["jsonrpc"] = "2.0"
	b, _ := json.Marshal(msg)
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		t.Fatalf("write to codex-acp: %v; stderr: %s", err, c.stderr())
	}
}

// call sends a request and reads until its answer, handling what the
// agent sends meanwhile (notifications, its own requests).
func (c *acpClient) call(t *testing.T, method string, params any) json.RawMessage {
	t.Helper()
	id := c.next
	c.next++
	c.send(t, map[string]any{"id": id, "method": method, "params": params})
	deadline := time.AfterFunc(90*time.Second, func() { _ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL) })
	defer deadline.Stop()
	for {
		line, err := c.out.ReadBytes('\n')
		if err != nil {
			t.Fatalf("%s: codex-acp ended (%v); stderr: %s", method, err, c.stderr())
		}
		var msg struct {
			ID     *json.RawMessage `json:"id"`
			Method string           `json:"method"`
			Params json.RawMessage  `json:"params"`
			Result json.RawMessage  `json:"result"`
			Error  *json.RawMessage `json:"error"`
		}
		if json.Unmarshal(line, &msg) != nil {
			continue
		}
		switch {
		case msg.Method == "session/update":
			c.update(msg.Params)
		case msg.Method != "" && msg.ID != nil:
			c.answer(t, *msg.ID, msg.Method, msg.Params)
		case msg.ID != nil && string(*msg.ID) == fmt.Sprint(id):
			if msg.Error != nil {
				t.Fatalf("%s: %s; stderr: %s", method, *msg.Error, c.stderr())
			}
			return msg.Result
		}
	}
}

// answer replies to the agent's requests: permissions are granted (the
// config asks for none), anything else is refused.
func (c *acpClient) answer(t *testing.T, id json.RawMessage, method string, params json.RawMessage) {
	if method == "session/request_permission" {
		var p struct {
			Options []struct {
				OptionID string `json:"optionId"`
				Kind     string `json:"kind"`
			} `json:"options"`
		}
		_ = json.Unmarshal(params, &p)
		for _, o := range p.Options {
			if strings.HasPrefix(o.Kind, "allow") {
				c.send(t, map[string]any{"id": id, "result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": o.OptionID}}})
				return
			}
		}
	}
	c.send(t, map[string]any{"id": id, "error": map[string]any{"code": -32601, "message": "not offered by this test client"}})
}

func (c *acpClient) update(params json.RawMessage) {
	var p struct {
		Update struct {
			Kind    string `json:"sessionUpdate"`
			Content struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"update"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch p.Update.Kind {
	case "agent_message_chunk":
		c.chunks.WriteString(p.Update.Content.Text)
	case "tool_call":
		c.tools++
	}
}

func (c *acpClient) prompt(t *testing.T, session, text string) string {
	var res struct {
		StopReason string `json:"stopReason"`
	}
	c.decode(t, c.call(t, "session/prompt", map[string]any{"sessionId": session,
		"prompt": []any{map[string]any{"type": "text", "text": text}}}), &res)
	return res.StopReason
}

func (c *acpClient) decode(t *testing.T, raw json.RawMessage, v any) {
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", raw, errors.Unwrap(err))
	}
}

func (c *acpClient) text() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.chunks.String()
}

func (c *acpClient) sawToolCall() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tools > 0
}

func (c *acpClient) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.chunks.Reset()
}
