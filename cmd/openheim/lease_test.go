//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/llm/llmtest"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
)

// TestPromptLeaseTakenOver: a real `openheim prompt` is stopped (SIGSTOP,
// as a laptop put to sleep) while it waits for the model; this process
// takes the session over as stale and stores a step. Resumed, the prompt
// gets its answer, but saving it is refused: it exits 1 with the lease
// error on stderr and in --json _meta.error, and stores nothing after the
// step of the process that took over.
func TestPromptLeaseTakenOver(t *testing.T) {
	r := newRig(t)
	r.srv.Enqueue(llmtest.Reply{Text: []string{"one"}})
	cmd, out, errOut := r.command("start")
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	id := sessionIDRE.FindStringSubmatch(out.String())[1]

	// The answer comes 3 s after the request: the prompt is stopped first.
	r.srv.Enqueue(llmtest.Reply{Text: []string{"late answer"}, DelayMs: 3000})
	cmd, out, errOut = r.command("--session", id, "go on")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	deadline := time.Now().Add(10 * time.Second)
	for len(r.srv.Requests()) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the prompt never called the model\n%s", errOut)
		}
		time.Sleep(time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	other := &session.Locker{Dir: filepath.Join(r.home, "history"), Host: "b",
		Now: func() time.Time { return time.Now().Add(time.Hour) }, Warn: func(string) {}}
	lease, err := other.Acquire(id)
	if err != nil {
		cmd.Process.Signal(syscall.SIGCONT)
		t.Fatalf("taking over the stopped prompt's session: %v", err)
	}
	defer lease.Release()
	store := r.store()
	step := message.Message{Role: message.RoleUser, Content: []message.Block{message.Text("b's step")}}
	if err := session.Fenced(store, id, lease).Append(id, step); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	want := fmt.Sprintf("the session's lease was taken over by pid %d on host b; this turn was stopped", os.Getpid())
	if code := cmd.ProcessState.ExitCode(); code != 1 {
		t.Fatalf("exit code %d, want 1\nstderr: %s", code, errOut)
	}
	if !strings.Contains(errOut.String(), "prompt: "+want) {
		t.Errorf("stderr %q, want the lease error", errOut)
	}
	var res struct {
		StopReason string `json:"stopReason"`
		Meta       struct {
			ExitCode int    `json:"exitCode"`
			Error    string `json:"error"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(lastLine(out.Bytes()), &res); err != nil || res.Meta.ExitCode != 1 || res.Meta.Error != want {
		t.Errorf("result line %s (%v)", lastLine(out.Bytes()), err)
	}
	conv, err := store.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range conv.Messages {
		got = append(got, m.JoinText())
	}
	if strings.Join(got, "|") != "start|one|go on|b's step" {
		t.Errorf("stored %q: want nothing of the stopped prompt's after b's step", got)
	}
}
