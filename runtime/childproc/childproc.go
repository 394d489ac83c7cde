// Package childproc starts the processes openheim runs for its tools and
// peers (shell commands, MCP stdio servers, ACP agents and their terminals)
// so that they die with openheim, however it ends.
//
// Each child leads a process group of its own, so that what it starts
// (pipelines, background jobs, npx's node) can be killed with it. Three
// mechanisms then cover the ways openheim can end:
//
//   - Normal exit, errors and handled signals: the owners kill their groups
//     (cancel, timeout, Close), and KillAll kills what is left on the way
//     out (background jobs a command left running).
//   - Any exit at all, SIGKILL and os.Exit included, on Unix: a guard, one
//     /bin/sh process per openheim process, reads the live group ids from a
//     pipe. When openheim dies the kernel closes the pipe, and the guard
//     kills every group still listed. It is the only mechanism that reaches
//     grandchildren after a SIGKILL.
//   - On Linux also the parent-death signal (Pdeathsig): the kernel sends
//     SIGKILL to each direct child when openheim dies, even should the guard
//     have been killed too. It does not reach grandchildren: the setting is
//     cleared in a forked child.
//
// What none of them catches: a descendant that leaves its process group
// (setsid, setpgid: daemons do) once the direct child is dead.
package childproc

import (
	"os/exec"
	"syscall"
)

// Start starts cmd as the leader of a new process group that dies with
// openheim. It replaces cmd.SysProcAttr. Once cmd.Wait has returned, call
// Exited; to end the command early, KillGroup.
func Start(cmd *exec.Cmd) error { return StartFunc(cmd, cmd.Start) }

// StartFunc is Start for a command that other code starts: start must call
// cmd.Start and return promptly (the MCP SDK's CommandTransport.Connect
// does). It runs on the thread children are started from (see spawn).
func StartFunc(cmd *exec.Cmd, start func() error) error {
	prepare(cmd)
	return groups.start(cmd, start)
}

// Exited tells that the process led by pid (a pid Start started) has been
// waited for. Its group is no longer guarded once it is empty: now, or when
// a later check finds the background processes it left have ended. Until
// then they are killed when openheim exits.
func Exited(pid int) { groups.exited(pid) }

// KillGroup sends SIGKILL to the group led by pid and stops guarding it. A
// group that is already gone gives an error wrapping os.ErrProcessDone
// (which exec.Cmd.Cancel's contract treats as success).
func KillGroup(pid int) error { return SignalGroup(pid, sigKill) }

// SignalGroup sends sig to the group led by pid; SIGKILL also stops
// guarding it. Where there are no process groups, the process alone gets
// the signal.
func SignalGroup(pid int, sig syscall.Signal) error {
	err := signalGroup(pid, sig)
	if sig == sigKill {
		groups.release(pid)
	}
	return err
}

const sigKill = syscall.SIGKILL

// KillAll kills every group still guarded. main calls it on the way out,
// so that nothing openheim started outlives it even for the moment the
// guard takes to notice.
func KillAll() { groups.killAll() }
