//go:build unix

package host

import (
	"os/exec"
	"syscall"

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
