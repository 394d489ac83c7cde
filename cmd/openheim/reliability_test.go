package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/llm/llmtest"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
)

// rig is a config, data dir and fake server for driving the real binary.
type rig struct {
	t    *testing.T
	bin  string
	dir  string
	srv  *llmtest.Server
	cfg  string
	home string
}

func newRig(t *testing.T) *rig {
	r := &rig{t: t, bin: binary(t), dir: t.TempDir(), srv: llmtest.New()}
	t.Cleanup(r.srv.Close)
	r.home = filepath.Join(r.dir, "home")
	work := filepath.Join(r.dir, "work")
	os.MkdirAll(work, 0o755)
	r.cfg = filepath.Join(r.dir, "config.toml")
	os.WriteFile(r.cfg, []byte(fmt.Sprintf("default_provider = \"fake\"\nwork_dir = %q\n[providers.fake]\napi_base = %q\ndefault_model = \"m\"\n", work, r.srv.URL())), 0o600)
	return r
}

func (r *rig) command(args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	cmd := exec.Command(r.bin, append([]string{"--config", r.cfg, "prompt", "--json"}, args...)...)
	cmd.Env = append(os.Environ(), "OPENHEIM_HOME="+r.home)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	return cmd, &out, &errOut
}

func (r *rig) store() *session.FileStore {
	s, err := session.NewFileStore(filepath.Join(r.home, "history"))
	if err != nil {
		r.t.Fatal(err)
	}
	return s
}

var sessionIDRE = regexp.MustCompile(`"sessionId":"([0-9a-f-]{36})"`)

// TestKill9KeepsSessionsLoadable kills openheim with SIGKILL at random
// points of a turn, 50 times, on one session: after every kill the session
// loads, every step the output showed as done is stored, the dead process's
// lease is taken over by the next run, and the session can still be
// continued to a normal end.
func TestKill9KeepsSessionsLoadable(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns 50 processes")
	}
	r := newRig(t)
	// Turns of a tool call (a real write) then a slowly streamed answer, so
	// kills land in the stream, in the tool and between steps.
	turns := 0
	script := func() {
		for r.srv.Pending() < 4 {
			r.srv.Enqueue(
				llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: fmt.Sprintf("w%d", turns), Name: "write_file",
					Arguments: fmt.Sprintf(`{"path":"f%d.txt","content":"%s"}`, turns, strings.Repeat("x", 2000)), Split: 4}}, ChunkDelayMs: 2},
				llmtest.Reply{Text: strings.Split("one two three four five six seven eight nine ten", " "), ChunkDelayMs: 2},
			)
			turns++
		}
	}
	script()
	cmd, out, errOut := r.command("start")
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	id := sessionIDRE.FindStringSubmatch(out.String())[1]
	store := r.store()
	rng := rand.New(rand.NewPCG(1, 2))
	tookOver := 0
	phases := map[string]int{}
	for trial := range 50 {
		script()
		cmd, out, errOut := r.command("--session", id, fmt.Sprintf("trial %d", trial))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(5+rng.IntN(60)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		if strings.Contains(errOut.String(), "taking over the lease") {
			tookOver++
		}
		phases[phase(out.String())]++
		conv, err := store.Load(id)
		if err != nil {
			t.Fatalf("trial %d: session does not load after kill -9: %v", trial, err)
		}
		checkStepsStored(t, trial, out.String(), conv.Messages)
	}
	if tookOver == 0 {
		t.Error("no run reported taking over a dead process's lease")
	}
	t.Logf("where the kills landed: %v; leases taken over: %d", phases, tookOver)
	if len(phases) < 2 {
		t.Errorf("kills landed in too few phases of a turn: %v", phases)
	}
	// The session is still good for a whole turn.
	r.srv.Reset()
	r.srv.Enqueue(llmtest.Reply{Text: []string{"all good"}})
	cmd, _, errOut = r.command("--session", id, "still there?")
	if err := cmd.Run(); err != nil {
		t.Fatalf("continuing after the kills: %v\n%s", err, errOut)
	}
	conv, err := store.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	checkWellFormed(t, conv.Messages)
}

// phase names how far a killed run got, from its output.
func phase(out string) string {
	switch {
	case strings.Contains(out, `"stopReason"`):
		return "finished"
	case strings.Contains(out, `"agent_message_chunk"`):
		return "answering"
	case strings.Contains(out, `"status":"completed"`):
		return "tool done"
	case strings.Contains(out, `"tool_call"`):
		return "tool running"
	case strings.Contains(out, `"session_info_update"`):
		return "waiting for the model"
	}
	return "starting"
}

// checkStepsStored asserts that what the killed run's output showed as done
// is in the store: a tool call that started means its assistant message was
// saved; answer text after a tool finished means the results were saved.
func checkStepsStored(t *testing.T, trial int, out string, msgs []message.Message) {
	t.Helper()
	stored := map[string]bool{}
	results := map[string]bool{}
	for _, m := range msgs {
		for _, b := range m.Content {
			if b.Type == message.TypeToolUse {
				stored[b.ID] = true
			}
			if b.Type == message.TypeToolResult {
				results[b.ToolCallID] = true
			}
		}
	}
	lastDone := ""
	for _, line := range strings.Split(out, "\n") {
		if m := regexp.MustCompile(`"toolCallId":"(w\d+)","status":"in_progress"`).FindStringSubmatch(line); m != nil && !stored[m[1]] {
			t.Fatalf("trial %d: tool call %s ran but its assistant message is not stored", trial, m[1])
		}
		if m := regexp.MustCompile(`"toolCallId":"(w\d+)","status":"completed"`).FindStringSubmatch(line); m != nil {
			lastDone = m[1]
		}
		if strings.Contains(line, `"agent_message_chunk"`) && lastDone != "" && !results[lastDone] {
			t.Fatalf("trial %d: the model was called again but the result of %s is not stored", trial, lastDone)
		}
	}
}

// checkWellFormed asserts every tool call has exactly one result, after the
// next turn's repair of calls a kill left unanswered.
func checkWellFormed(t *testing.T, msgs []message.Message) {
	t.Helper()
	calls, results := map[string]int{}, map[string]int{}
	for _, m := range msgs {
		for _, b := range m.Content {
			if b.Type == message.TypeToolUse {
				calls[b.ID]++
			}
			if b.Type == message.TypeToolResult {
				results[b.ToolCallID]++
			}
		}
	}
	for id, n := range results {
		if n != 1 || calls[id] != 1 {
			t.Errorf("call %s: %d tool_use, %d results", id, calls[id], n)
		}
	}
}

// TestTwoProcessesOneSession: while one process runs a turn on a session, a
// second gets session_locked naming the first's pid; once the first is done
// the second can go on.
func TestTwoProcessesOneSession(t *testing.T) {
	r := newRig(t)
	r.srv.Enqueue(llmtest.Reply{Text: []string{"first"}})
	cmd, out, _ := r.command("start")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	id := sessionIDRE.FindStringSubmatch(out.String())[1]

	r.srv.Enqueue(llmtest.Reply{Text: []string{"holding"}, Hang: true})
	a, _, _ := r.command("--session", id, "long turn")
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); r.srv.Hanging() < 1; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("first process never reached the model")
		}
	}
	b, bout, berr := r.command("--session", id, "me too")
	err := b.Run()
	if b.ProcessState.ExitCode() != 1 || bout.Len() != 0 {
		t.Fatalf("second process: %v, stdout %q", err, bout.String())
	}
	want := fmt.Sprintf("is locked by pid %d on ", a.Process.Pid)
	if !strings.Contains(berr.String(), want) {
		t.Fatalf("stderr %q lacks %q", berr.String(), want)
	}
	a.Process.Signal(syscall.SIGINT)
	a.Wait()
	r.srv.Enqueue(llmtest.Reply{Text: []string{"my turn"}})
	b, bout, berr = r.command("--session", id, "me too")
	if err := b.Run(); err != nil || !strings.Contains(bout.String(), "my turn") {
		t.Fatalf("after the first finished: %v %s", err, berr)
	}
	if data, err := os.ReadFile(session.LockPath(filepath.Join(r.home, "history"), id)); err != nil ||
		!strings.Contains(string(data), `"released_at"`) || strings.Contains(string(data), `"pid"`) {
		t.Errorf("lease not marked released after the turn: %s %v", data, err)
	}
}
