//go:build unix

package host

import (
	"os/exec"
	"syscall"
	"time"

	"github.com/openheim/openheim/runtime/childproc"
)

// hostSignalGroup signals the agent's whole process group (childproc
// started it as a group leader), so ending it also ends what it started
// (npx and node grandchildren).
func hostSignalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.Process == nil {
		return
	}
	if err := childproc.SignalGroup(cmd.Process.Pid, sig); err != nil {
		cmd.Process.Signal(sig)
	}
}

// reapGroup waits up to d for what is left of the agent's process group
// once the agent itself has exited (Claude Code's `claude` got the same
// SIGTERM), then kills the rest: nothing of the agent outlives Close.
func reapGroup(cmd *exec.Cmd, d time.Duration) {
	if cmd.Process == nil {
		return
	}
	pid := cmd.Process.Pid
	deadline := time.Now().Add(d)
	for groupLive(pid) {
		if time.Now().After(deadline) {
			childproc.KillGroup(pid)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
