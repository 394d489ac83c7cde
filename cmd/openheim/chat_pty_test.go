package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/openheim/openheim/runtime/llm/llmtest"
)

// term is openheim running on a pseudo-terminal, as a person would run it.
type term struct {
	t    *testing.T
	f    *os.File
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer // everything the program wrote, ANSI escapes included
	seen int          // how far expect has matched
	done chan error
}

var ansiRE = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-B]|[\r\x08]`)

// startTerm runs the openheim binary with args on a 120x40 pty, with
// OPENHEIM_HOME at home and colour on (unless env says otherwise).
func startTerm(t *testing.T, home string, env []string, args ...string) *term {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = append(os.Environ(), "OPENHEIM_HOME="+home, "TERM=xterm-256color", "COLUMNS=120")
	cmd.Env = slicesWithout(cmd.Env, "NO_COLOR=")
	cmd.Env = append(cmd.Env, env...)
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		t.Fatal(err)
	}
	tm := &term{t: t, f: f, cmd: cmd, done: make(chan error, 1)}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			tm.mu.Lock()
			tm.out.Write(buf[:n])
			tm.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	go func() { tm.done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		f.Close()
		if t.Failed() {
			t.Logf("terminal output:\n%s", tm.screen())
		}
	})
	return tm
}

func slicesWithout(env []string, prefix string) []string {
	out := env[:0]
	for _, e := range env {
		if !strings.HasPrefix(e, prefix) {
			out = append(out, e)
		}
	}
	return out
}

// screen is the output so far without escape sequences.
func (tm *term) screen() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return ansiRE.ReplaceAllString(tm.out.String(), "")
}

// raw is the output so far, escapes included.
func (tm *term) raw() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.out.String()
}

// expect waits until the text after what was matched last matches re.
func (tm *term) expect(re string) {
	tm.t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := tm.screen()
		if loc := rx.FindStringIndex(s[tm.seen:]); loc != nil {
			tm.seen += loc[1]
			return
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("no %q on the terminal after 20s; after the last match it shows:\n%s", re, s[tm.seen:])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (tm *term) send(s string) {
	tm.t.Helper()
	if _, err := tm.f.Write([]byte(s)); err != nil {
		tm.t.Fatal(err)
	}
}

// wait waits for the process to exit and returns its exit code.
func (tm *term) wait() int {
	tm.t.Helper()
	select {
	case err := <-tm.done:
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		if err != nil {
			tm.t.Fatal(err)
		}
		return 0
	case <-time.After(20 * time.Second):
		tm.t.Fatalf("openheim did not exit; the terminal shows:\n%s", tm.screen())
		return -1
	}
}

// chatEnv is a work directory, a data directory and a config for a fake LLM.
func chatEnv(t *testing.T, srv *llmtest.Server, extra string) (home, cfg, work string) {
	dir := t.TempDir()
	home, work = filepath.Join(dir, "home"), filepath.Join(dir, "work")
	os.MkdirAll(work, 0o755)
	cfg = filepath.Join(dir, "config.toml")
	os.WriteFile(cfg, []byte(`default_provider = "fake"
work_dir = "`+work+`"
[providers.fake]
api_base = "`+srv.URL()+`"
default_model = "fake-model"
models = ["fake-model", "fake-big"]
context_window = 100000
[tui]
theme_color = "magenta"
`+extra), 0o644)
	return home, cfg, work
}

// lastMessages decodes the messages of the fake server's request n (1-based).
func requestOf(t *testing.T, srv *llmtest.Server, n int) map[string]any {
	t.Helper()
	reqs := srv.Requests()
	if len(reqs) < n {
		t.Fatalf("the fake LLM got %d requests, want at least %d", len(reqs), n)
	}
	var body map[string]any
	if err := json.Unmarshal(reqs[n-1].Raw, &body); err != nil {
		t.Fatal(err)
	}
	return body
}

func TestChatREPLTurn(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	srv.Enqueue(llmtest.Reply{Thinking: []string{"pondering"}, Text: []string{"# Plan\n\nHello ", "**there**, use `go test`.\n"}})
	home, cfg, _ := chatEnv(t, srv, "")
	tm := startTerm(t, home, nil, "--config", cfg, "chat")
	tm.expect(`openheim .* fake/fake-model · code mode`)
	tm.expect(`› *$`)
	tm.send("Say hi\r")
	tm.expect(`pondering`)
	tm.expect(`Plan\n\nHello there, use go test\.`)
	tm.expect(`› *$`)
	// The theme colour (magenta) styles the heading; markdown markers are gone.
	if raw := tm.raw(); !strings.Contains(raw, "\x1b[35m") || strings.Contains(raw, "**there**") {
		t.Errorf("want magenta styling and no markdown markers; raw output:\n%q", raw)
	}
	tm.send("\x04") // Ctrl-D quits
	if code := tm.wait(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	if body := requestOf(t, srv, 1); !strings.Contains(string(srv.Requests()[0].Raw), `"content":"Say hi"`) {
		t.Errorf("request: %v", body)
	}
	if data, err := os.ReadFile(filepath.Join(home, "chat_history")); err != nil || !strings.Contains(string(data), "Say hi") {
		t.Errorf("history file: %q, %v", data, err)
	}
}

func TestChatREPLPermissionAsk(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	write := func(id, path string) llmtest.Reply {
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: id, Name: "write_file", Arguments: `{"path":"` + path + `","content":"hi"}`}}}
	}
	srv.Enqueue(write("c1", "a.txt"), llmtest.Reply{Text: []string{"Wrote a."}},
		write("c2", "b.txt"), llmtest.Reply{Text: []string{"Could not write b."}},
		write("c3", "c.txt"))
	home, cfg, work := chatEnv(t, srv, "")
	tm := startTerm(t, home, []string{"NO_COLOR=1"}, "--config", cfg, "chat")
	tm.expect(`› *$`)
	tm.send("Write a.txt\r")
	tm.expect(`allow write_file a\.txt\?`)
	tm.expect(`\[y\] once  \[a\] always  \[n\] reject  \[r\] always reject › *$`)
	// One key answers, no Enter; other keys (and Enter) are ignored.
	tm.send("x\r")
	tm.send("y")
	tm.expect(`allowed once`)
	tm.expect(`✓ write_file a\.txt · new file \+1 · `)
	tm.expect(`Wrote a\.`)
	tm.expect(`› *$`)
	if data, err := os.ReadFile(filepath.Join(work, "a.txt")); err != nil || string(data) != "hi" {
		t.Fatalf("a.txt: %q, %v", data, err)
	}
	tm.send("Write b.txt\r")
	tm.expect(`allow write_file b\.txt\?`)
	tm.send("N")
	tm.expect(`✗ write_file b\.txt · .* Permission denied by user\.`)
	tm.expect(`Could not write b\.`)
	tm.expect(`› *$`)
	if _, err := os.Stat(filepath.Join(work, "b.txt")); err == nil {
		t.Fatal("b.txt was written after the call was rejected")
	}
	// Ctrl-C at the question rejects the call and cancels the turn.
	tm.send("Write c.txt\r")
	tm.expect(`allow write_file c\.txt\?`)
	tm.send("\x03")
	tm.expect(`⏹ cancelled`)
	tm.expect(`› *$`)
	if _, err := os.Stat(filepath.Join(work, "c.txt")); err == nil {
		t.Fatal("c.txt was written after Ctrl-C at the question")
	}
	tm.send("/exit\r")
	if code := tm.wait(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
}

func TestChatREPLCtrlCCancelsTurn(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	srv.Enqueue(llmtest.Reply{Text: []string{"partial answer"}, Hang: true}, llmtest.Reply{Text: []string{"Resumed."}})
	home, cfg, _ := chatEnv(t, srv, "")
	tm := startTerm(t, home, nil, "--config", cfg, "chat")
	tm.expect(`› *$`)
	tm.send("Write a long essay\r")
	tm.expect(`partial answer`)
	tm.send("\x03")
	tm.expect(`⏹ cancelled · what was done is kept in the session`)
	tm.expect(`› *$`)
	// The cancelled turn's text is in the session: the next turn sends it.
	tm.send("go on\r")
	tm.expect(`Resumed\.`)
	tm.expect(`› *$`)
	if raw := string(srv.Requests()[1].Raw); !strings.Contains(raw, "partial answer") {
		t.Errorf("the second request lacks the cancelled turn's text: %s", raw)
	}
	// Ctrl-C twice at an empty prompt quits.
	tm.send("\x03")
	tm.expect(`press Ctrl-C again, or Ctrl-D, to quit`)
	tm.send("\x03")
	if code := tm.wait(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
}

func TestChatREPLModelAndResume(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	srv.Enqueue(llmtest.Reply{Text: []string{"The first answer."}}, llmtest.Reply{Text: []string{"On the big model."}},
		llmtest.Reply{Text: []string{"Back in the first session."}})
	home, cfg, _ := chatEnv(t, srv, "")
	// A session made by `prompt`, to resume from the REPL.
	pr := exec.Command(binary(t), "--config", cfg, "prompt", "First question")
	pr.Env = append(os.Environ(), "OPENHEIM_HOME="+home)
	if out, err := pr.CombinedOutput(); err != nil {
		t.Fatalf("prompt: %v\n%s", err, out)
	}
	ls := exec.Command(binary(t), "--config", cfg, "sessions", "ls", "--select", "id")
	ls.Env = pr.Env
	idOut, err := ls.Output()
	if err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSpace(string(idOut))

	tm := startTerm(t, home, []string{"NO_COLOR=1"}, "--config", cfg, "chat")
	tm.expect(`› *$`)
	tm.send("/model\r")
	tm.expect(`\* fake/fake-model\n  fake/fake-big\n`)
	tm.send("/model fake-big\r")
	tm.expect(`model: fake/fake-big`)
	tm.send("/model nope\r")
	tm.expect(`✗ /model: model "nope" is not offered by provider "fake"`)
	tm.send("Hello big\r")
	tm.expect(`On the big model\.`)
	tm.expect(`› *$`)
	if body := requestOf(t, srv, 2); body["model"] != "fake-big" {
		t.Errorf("the turn after /model used %v", body["model"])
	}

	tm.send("/resume " + id[:6] + "\r")
	tm.expect(`resumed ` + id[:8] + ` "First question" · 2 messages · fake/fake-model`)
	tm.expect(`› First question`)
	tm.expect(`The first answer\.`)
	tm.send("And now?\r")
	tm.expect(`Back in the first session\.`)
	tm.expect(`› *$`)
	raw := string(srv.Requests()[2].Raw)
	if !strings.Contains(raw, "The first answer.") || strings.Contains(raw, "Hello big") {
		t.Errorf("the turn after /resume did not continue the resumed session: %s", raw)
	}
	if body := requestOf(t, srv, 3); body["model"] != "fake-model" {
		t.Errorf("the resumed session's model is fake-model; the turn used %v", body["model"])
	}
	tm.send("/mdoel\r")
	tm.expect(`✗ unknown command /mdoel \(did you mean /model\? /help lists the commands\)`)
	tm.send("/exit\r")
	if code := tm.wait(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
}

func TestChatREPLInputEditing(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	srv.Enqueue(llmtest.Reply{Text: []string{"one"}}, llmtest.Reply{Text: []string{"two"}})
	home, cfg, _ := chatEnv(t, srv, "")
	tm := startTerm(t, home, []string{"NO_COLOR=1"}, "--config", cfg, "chat")
	tm.expect(`› *$`)
	// Tab completes a slash command.
	tm.send("/hel\t")
	tm.expect(`/help`)
	tm.send("\r")
	tm.expect(`/usage\s+context and tokens of this session`)
	tm.expect(`› *$`)
	// A trailing backslash continues the input on the next line.
	tm.send("first line\\\r")
	tm.expect(`… *$`)
	tm.send("second line\r")
	tm.expect(`one`)
	tm.expect(`› *$`)
	// A bracketed paste keeps its line breaks.
	tm.send("\x1b[200~pasted 1\npasted\t2\x1b[201~\r")
	tm.expect(`two`)
	tm.expect(`› *$`)
	tm.send("\x04")
	if code := tm.wait(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	if raw := string(srv.Requests()[0].Raw); !strings.Contains(raw, `"content":"first line\nsecond line"`) {
		t.Errorf("multi-line input: %s", raw)
	}
	if raw := string(srv.Requests()[1].Raw); !strings.Contains(raw, `"content":"pasted 1\npasted\t2"`) {
		t.Errorf("pasted input: %s", raw)
	}
	hist, _ := os.ReadFile(filepath.Join(home, "chat_history"))
	if !strings.Contains(string(hist), "first line␤second line\n") {
		t.Errorf("a multi-line input is one history entry; history:\n%s", hist)
	}
}
