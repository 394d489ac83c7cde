//go:build !unix

package childproc

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// guard does nothing where there are no process groups.
type guard struct{}

func startGuard() (*guard, error) { return nil, errors.New("no process groups on this system") }

func (*guard) send(byte, int) {}

func signalGroup(pid int, sig syscall.Signal) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	if sig == syscall.SIGKILL {
		return p.Kill()
	}
	return p.Signal(sig)
}

// groupGone is true: nothing can be probed here, and a pid the system may
// have reused must not be killed later.
func groupGone(int) bool { return true }

// gate is not needed without a guard.
type gate struct{}

func hold(*exec.Cmd) *gate { return nil }
func (*gate) open()        {}
func (*gate) close()       {}
