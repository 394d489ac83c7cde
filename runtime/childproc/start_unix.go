//go:build unix && !linux

package childproc

import (
	"os/exec"
	"syscall"
)

// prepare puts the child in a group of its own. There is no parent-death
// signal here: the guard is what reaches children after a SIGKILL.
func prepare(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

func spawn(start func() error) error { return start() }
