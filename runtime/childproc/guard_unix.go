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

// gate holds a new child back until its group is on the guard's list. The
// child starts as a shell that waits for one line on an extra file and
// then execs the real program (same pid, so the same group): nothing the
// program forks can exist before the guard knows the group. Without it, a
// SIGKILL of openheim between the fork and the guard's "+" line would leave
// whatever the child had started by then running (seen under load: a
// shell's background jobs start within a millisecond).
type gate struct{ r, w *os.File }

// gateScript reads "go" on fd %[1]d (EOF: openheim died first, so exec
// nothing), closes it, and execs argv[0] with the rest of the arguments.
const gateScript = `IFS= read -r go <&%[1]d && [ "$go" = go ] || exit 125; exec %[1]d<&-; exec "$0" "$@"`

// hold rewrites cmd to start behind a gate; nil (no gate) when cmd cannot
// start anyway or there is no shell to gate with.
func hold(cmd *exec.Cmd) *gate {
	if cmd.Err != nil || cmd.Path == "" || len(cmd.Args) == 0 {
		return nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil
	}
	fd := 3 + len(cmd.ExtraFiles)
	cmd.ExtraFiles = append(cmd.ExtraFiles, r)
	cmd.Args = append([]string{gateShell, "-c", fmt.Sprintf(gateScript, fd), cmd.Path}, cmd.Args[1:]...)
	cmd.Path = gateShell
	return &gate{r: r, w: w}
}

// gateShell is the shell a gated child starts as.
var gateShell = "/bin/sh"

// open lets the child exec its program; close drops the gate of a child
// that did not start. Both are safe on a nil gate.
func (g *gate) open() {
	if g == nil {
		return
	}
	g.r.Close()
	g.w.WriteString("go\n")
	g.w.Close()
}

func (g *gate) close() {
	if g == nil {
		return
	}
	g.r.Close()
	g.w.Close()
}
