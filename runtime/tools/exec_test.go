//go:build unix

package tools

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func shellTool(t *testing.T) *ExecuteCommand {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	return &ExecuteCommand{Root: mustRoot(t, t.TempDir())}
}

func cmdArgs(command string) string {
	b, _ := json.Marshal(map[string]string{"command": command})
	return string(b)
}

func TestExecuteCommandOutput(t *testing.T) {
	tool := shellTool(t)
	tests := []struct {
		name, command, want string
		isErr               bool
	}{
		{"stdout", "echo hello", "hello\n", false},
		{"no output", "true", "(no output)", false},
		{"stdout stderr exit", "echo out; echo err >&2; exit 3", "out\n[stderr]\nerr\n[exit code 3]", true},
		{"stderr only, success", "printf warn >&2", "[stderr]\nwarn", false},
		{"exit code only", "false", "[exit code 1]", true},
		{"stdout without newline", "printf abc; exit 2", "abc\n[exit code 2]", true},
		{"runs in work dir", "pwd", tool.Root.Path() + "\n", false},
		{"stdin is /dev/null", "cat; echo done", "done\n", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, tool, cmdArgs(tc.command))
			if r.Content != tc.want || r.IsError != tc.isErr {
				t.Fatalf("got %+v, want %q isError=%v", r, tc.want, tc.isErr)
			}
		})
	}
}

func TestExecuteCommandStdinDoesNotBlock(t *testing.T) {
	tool := shellTool(t)
	tool.Timeout = 10 * time.Second
	start := time.Now()
	r := run(t, tool, cmdArgs("cat"))
	if time.Since(start) > 5*time.Second {
		t.Fatal("cat waited for input")
	}
	wantOK(t, r, "(no output)")
}

// processGone reports whether pid has exited (a zombie counts: it no longer
// runs, it only waits for an init that may not reap).
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
		return true
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return os.IsNotExist(err)
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(fields) > 0 && fields[0] == "Z"
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for !processGone(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("background process %d survived", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestExecuteCommandTimeoutKillsProcessGroup(t *testing.T) {
	tool := shellTool(t)
	// Long enough for the shell to start and write bg.pid on a loaded
	// machine; what is tested is that the timeout kills the whole group.
	tool.Timeout = 2 * time.Second
	start := time.Now()
	r := run(t, tool, cmdArgs("sleep 30 & echo $! > bg.pid; sleep 30"))
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("took %v after a 2s timeout", d)
	}
	wantErr(t, r, "[command timed out after 2s and was killed]")
	data, err := os.ReadFile(tool.Root.Path() + "/bg.pid")
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid)
}

func TestExecuteCommandCancel(t *testing.T) {
	tool := shellTool(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(time.Second, cancel) // time for "before" on a loaded machine
	start := time.Now()
	r := tool.Run(ctx, json.RawMessage(cmdArgs("echo before; sleep 30")))
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v after cancel", d)
	}
	wantErr(t, r, "before\n[command cancelled; its process group was killed]")

	// Already cancelled: nothing runs.
	r = tool.Run(ctx, json.RawMessage(cmdArgs("echo never")))
	wantErr(t, r, "cancelled")
	if strings.Contains(r.Content, "never") {
		t.Fatalf("command ran after cancellation: %q", r.Content)
	}
}

func TestExecuteCommandBackgroundChildHoldingPipe(t *testing.T) {
	tool := shellTool(t)
	tool.WaitDelay = 200 * time.Millisecond
	start := time.Now()
	r := run(t, tool, cmdArgs("sleep 5 & echo $!"))
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("took %v: the background child kept the tool waiting", d)
	}
	if r.IsError {
		t.Fatalf("got error %q", r.Content)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(r.Content))
	if err != nil {
		t.Fatalf("output %q: %v", r.Content, err)
	}
	syscall.Kill(pid, syscall.SIGKILL)
}

func TestExecuteCommandTruncation(t *testing.T) {
	tool := shellTool(t)
	r := run(t, tool, cmdArgs("head -c 100000 /dev/zero | tr '\\0' a; head -c 70000 /dev/zero | tr '\\0' b >&2"))
	want := strings.Repeat("a", 65536) + "\n[... output truncated: 34464 more bytes not shown]\n" +
		"[stderr]\n" + strings.Repeat("b", 65536) + "\n[... output truncated: 4464 more bytes not shown]\n"
	if r.IsError || r.Content != want {
		t.Fatalf("got %d bytes (error=%v), want %d; tail %q", len(r.Content), r.IsError, len(want), r.Content[max(0, len(r.Content)-120):])
	}
}

func TestCapWriterKeepsRunesWhole(t *testing.T) {
	var w capWriter
	w.Write([]byte(strings.Repeat("a", maxStreamBytes-1)))
	w.Write([]byte("é and more"))
	got := w.String()
	want := strings.Repeat("a", maxStreamBytes-1) + "\n[... output truncated: 11 more bytes not shown]\n"
	if got != want {
		t.Fatalf("tail %q", got[len(got)-60:])
	}
}
