//go:build unix

package mcp

import (
	"os/exec"
	"syscall"
)

// setProcessGroup starts the server as the leader of a new process group, so
// that the grandchildren it spawns (npx, sh -c, uvx) can be killed with it.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killProcessGroup sends SIGKILL to the group led by pid; a group that is
// already gone is not an error.
func killProcessGroup(pid int) {
	_ = syscall.Kill(-pid, syscall.SIGKILL)
}
