//go:build unix

package childproc

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// guardScript keeps the list of live group ids it reads ("+ ID" and
// "- ID" lines) and kills every group left on it at end of input, which
// comes when openheim exits or is killed: the kernel closes the pipe's
// write end with the process. It ignores the terminal's signals, which it
// must outlive.
const guardScript = `trap '' HUP INT QUIT
l=' '
while read -r op id; do
	case $op in
	+) l="$l$id " ;;
	-) case $l in *" $id "*) l="${l%% $id *} ${l#* $id }" ;; esac ;;
	esac
done
for id in $l; do kill -s KILL -- "-$id" 2>/dev/null; done
`

// guardShell runs the guard; tests point it elsewhere to do without one.
var guardShell = "/bin/sh"

// guard is the write end of the guard's pipe.
type guard struct{ w *os.File }

func startGuard() (*guard, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	cmd := exec.Command(guardShell, "-c", guardScript)
	cmd.Stdin = r
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C"}
	// Its own group, so that Ctrl-C at the terminal leaves it alone; and
	// no parent-death signal: it must outlive openheim.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil, err
	}
	// Reaps the guard should it die early; it ends with the guard, which
	// ends with openheim.
	go func() { _ = cmd.Wait() }()
	return &guard{w: w}, nil
}

// send writes one line; a guard that cannot keep up or is gone only costs
// its protection, never a start or a kill.
func (g *guard) send(op byte, pid int) {
	if g == nil {
		return
	}
	_ = g.w.SetWriteDeadline(time.Now().Add(time.Second))
	if _, err := fmt.Fprintf(g.w, "%c %d\n", op, pid); err != nil {
		slog.Debug("childproc: guard unreachable", "error", err)
	}
}

// signalGroup signals the whole group led by pid.
func signalGroup(pid int, sig syscall.Signal) error {
	err := syscall.Kill(-pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("process group %d: %w", pid, os.ErrProcessDone)
	}
	return err
}

// groupGone reports whether the group led by pid has no member openheim
// may signal: none at all, or only another user's (the id was reused).
func groupGone(pid int) bool { return syscall.Kill(-pid, 0) != nil }
