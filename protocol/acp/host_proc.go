//go:build unix

package acp

import (
	"os/exec"
	"syscall"
)

// hostSetpgid puts the agent in a process group of its own, so ending it
// also ends what it started (npx and node grandchildren).
func hostSetpgid(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// hostSignalGroup signals the agent's whole process group.
func hostSignalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.Process == nil {
		return
	}
	if err := syscall.Kill(-cmd.Process.Pid, sig); err != nil {
		cmd.Process.Signal(sig)
	}
}
