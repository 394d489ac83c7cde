//go:build unix

package session

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLeaseTwoProcesses: a real second process holds the lease and is
// stopped (SIGSTOP, as a laptop asleep); this process takes the session
// over and appends. Resumed, the holder's renewal finds the lease taken
// and its append is refused, naming this process. (The holder is stopped
// only while idle: stopped holding the guard or its session's flock, it
// would keep this process waiting for it, as it should.)
func TestLeaseTwoProcesses(t *testing.T) {
	s := newLeaseStore(t)
	child, cmd, _ := startFenceHelper(t, s.Dir)
	if got := cmd("append a1"); got != "ok" {
		t.Fatalf("a1: %s", got)
	}
	if got := cmd("renew"); got != "renewed" {
		t.Fatalf("renewal before the pause: %s", got)
	}
	if err := child.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	b, err := taker(s.Dir).Acquire(lockID)
	if err != nil {
		child.Process.Signal(syscall.SIGCONT)
		t.Fatalf("takeover of the stopped holder: %v", err)
	}
	defer b.Release()
	if err := Fenced(s, lockID, b).Append(lockID, textMsg("b1")); err != nil {
		t.Fatal(err)
	}
	if err := child.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("the session's lease was taken over by pid %d on host b; this turn was stopped", os.Getpid())
	if got := cmd("renew"); got != "lost: "+want {
		t.Errorf("renewal after the pause: %q", got)
	}
	if got := cmd("append a2"); got != "refused: "+want {
		t.Errorf("append after the pause: %q", got)
	}
	if got := texts(t, s, lockID); strings.Join(got, ",") != "a1,b1" {
		t.Errorf("stored %q, want a1,b1", got)
	}
}

// TestLeaseTwoProcessesRace: a real second process appends under its
// fence as fast as it can while this one takes the session over and
// appends: the takeover's step is the last, after an unbroken run of the
// other's.
func TestLeaseTwoProcessesRace(t *testing.T) {
	s := newLeaseStore(t)
	_, cmd, answer := startFenceHelper(t, s.Dir)
	cmd("loop")
	deadline := time.Now().Add(10 * time.Second)
	for n, _ := s.MessageCount(lockID); n < 5; n, _ = s.MessageCount(lockID) {
		if time.Now().After(deadline) {
			t.Fatal("the helper does not append")
		}
		time.Sleep(time.Millisecond)
	}
	b, err := taker(s.Dir).Acquire(lockID)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	if err := Fenced(s, lockID, b).Append(lockID, textMsg("b")); err != nil {
		t.Fatal(err)
	}
	stopped := answer()
	if !strings.HasPrefix(stopped, "stopped after ") || !strings.Contains(stopped, "taken over by pid") {
		t.Fatalf("helper: %q", stopped)
	}
	got := texts(t, s, lockID)
	for i, text := range got[:len(got)-1] {
		if text != fmt.Sprint("a-", i) {
			t.Fatalf("message %d is %q: %q", i, text, got)
		}
	}
	if got[len(got)-1] != "b" {
		t.Fatalf("last message %q after the takeover's (%d messages)", got[len(got)-1], len(got))
	}
}

// startFenceHelper starts the helper process on the session in dir; cmd
// sends a command line and returns the answer line, answer reads one more.
func startFenceHelper(t *testing.T, dir string) (child *exec.Cmd, cmd func(string) string, answer func() string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	child = exec.Command(exe)
	child.Env = append(os.Environ(), fenceHelperEnv+"="+dir+"|"+lockID)
	stdin, _ := child.StdinPipe()
	out, _ := child.StdoutPipe()
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		child.Process.Signal(syscall.SIGCONT)
		stdin.Close()
		done := make(chan struct{})
		go func() { child.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			child.Process.Kill()
			<-done
		}
	})
	lines := make(chan string)
	go func() {
		in := bufio.NewScanner(out)
		for in.Scan() {
			lines <- in.Text()
		}
		close(lines)
	}()
	answer = func() string {
		t.Helper()
		select {
		case line := <-lines:
			return line
		case <-time.After(20 * time.Second):
			t.Fatal("the helper did not answer")
			return ""
		}
	}
	if got := answer(); got != "ready" {
		t.Fatalf("helper said %q", got)
	}
	cmd = func(line string) string {
		fmt.Fprintln(stdin, line)
		if line == "loop" {
			return ""
		}
		return answer()
	}
	return child, cmd, answer
}
