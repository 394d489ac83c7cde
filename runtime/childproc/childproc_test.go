//go:build linux

package childproc

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain doubles as the helper process of the kill -9 tests: with
// CHILDPROC_HELPER set, the test binary starts a child the way openheim
// does, prints its pid and waits to be killed.
func TestMain(m *testing.M) {
	if mode := os.Getenv("CHILDPROC_HELPER"); mode != "" {
		helper(mode)
		return
	}
	os.Exit(m.Run())
}

func helper(mode string) {
	switch mode {
	case "noguard":
		guardShell = "/nonexistent/sh"
	case "window":
		// Killed between the start and the guard's "+" line.
		afterSpawn = func(cmd *exec.Cmd) {
			fmt.Println(cmd.Process.Pid)
			time.Sleep(time.Hour)
		}
	}
	cmd := exec.Command("/bin/sh", "-c", os.Getenv("CHILDPROC_COMMAND"))
	if err := Start(cmd); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println(cmd.Process.Pid)
	// Not select{}: with no other goroutine runnable (no guard) the runtime
	// would end the helper as deadlocked, and the parent-death signal with it.
	for {
		time.Sleep(time.Hour)
	}
}

// procs lists the live (not zombie) processes whose command line is argv
// (words separated by spaces), by pid.
func procs(t *testing.T, argv string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || string(cmdline) != strings.ReplaceAll(argv, " ", "\x00")+"\x00" {
			continue
		}
		if !gone(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// gone reports whether pid has exited (a zombie has).
func gone(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(f) == 0 || f[0] == "Z"
}

func waitFor(t *testing.T, what string, d time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// killHelper runs the helper with command, waits for the markers to run,
// kills the helper with SIGKILL and returns the marked processes' pids.
func killHelper(t *testing.T, mode, command string, markers ...string) []int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CHILDPROC_HELPER="+mode, "CHILDPROC_COMMAND="+command)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pids []int
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if _, perr := strconv.Atoi(strings.TrimSpace(line)); err != nil || perr != nil {
		t.Fatalf("helper said %q, %v", line, err)
	}
	waitFor(t, "the children to start", 5*time.Second, func() bool {
		pids = nil
		for _, m := range markers {
			pids = append(pids, procs(t, m)...)
		}
		return len(pids) == len(markers)
	})
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	return pids
}

// sleepArg is a sleep duration of about an hour that no other process
// (another run of these tests) uses, so the sleep can be found by it.
func sleepArg(n int) string { return fmt.Sprintf("3000.%d%d", os.Getpid(), n) }

// TestGuardKillsGrandchildrenAfterKill9: after a SIGKILL of the parent, the
// guard kills the whole group, background job and foreground grandchild
// included (sh forks them: the "; :" keeps it from exec'ing the last).
func TestGuardKillsGrandchildrenAfterKill9(t *testing.T) {
	a, b := sleepArg(1), sleepArg(2)
	pids := killHelper(t, "guard", "sleep "+a+" & sleep "+b+"; :", "sleep "+a, "sleep "+b)
	waitFor(t, "the guard to kill the group", 5*time.Second, func() bool {
		return gone(pids[0]) && gone(pids[1])
	})
}

// TestPdeathsigWithoutGuard: with no guard, the parent-death signal still
// kills the direct child; a grandchild survives, which is why the guard
// exists.
func TestPdeathsigWithoutGuard(t *testing.T) {
	a, b := sleepArg(3), sleepArg(4)
	pids := killHelper(t, "noguard", "exec sleep "+a, "sleep "+a)
	waitFor(t, "the parent-death signal", 5*time.Second, func() bool { return gone(pids[0]) })

	pids = killHelper(t, "noguard", "sleep "+b+"; :", "sleep "+b)
	time.Sleep(300 * time.Millisecond)
	if gone(pids[0]) {
		t.Error("the grandchild died without a guard: this test no longer shows why the guard is needed")
	}
}

// TestStartFromExitingLockedThread: the parent-death signal fires when the
// thread that forked a child ends. Goroutines that lock their thread and
// return end it; children started from them must live on.
func TestStartFromExitingLockedThread(t *testing.T) {
	const n = 6
	cmds := make(chan *exec.Cmd, n)
	for i := range n {
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
			cmd := exec.Command("sleep", sleepArg(10+i))
			if err := Start(cmd); err != nil {
				t.Error(err)
				cmd = nil
			}
			cmds <- cmd
		}()
	}
	var started []*exec.Cmd
	for range n {
		if cmd := <-cmds; cmd != nil {
			started = append(started, cmd)
		}
	}
	time.Sleep(300 * time.Millisecond) // the locked threads are gone by now
	for _, cmd := range started {
		if gone(cmd.Process.Pid) {
			t.Errorf("child %d died with the thread that started it", cmd.Process.Pid)
		}
		KillGroup(cmd.Process.Pid)
		cmd.Wait()
	}
}

func TestStartSetsGroup(t *testing.T) {
	cmd := exec.Command("sleep", sleepArg(40))
	if err := Start(cmd); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer KillGroup(cmd.Process.Pid)
	pgid, err := syscall.Getpgid(cmd.Process.Pid)
	if err != nil || pgid != cmd.Process.Pid {
		t.Errorf("pgid = %d, %v; want %d", pgid, err, cmd.Process.Pid)
	}
	if a := cmd.SysProcAttr; a == nil || !a.Setpgid || a.Pdeathsig != syscall.SIGKILL {
		t.Errorf("SysProcAttr = %+v", a)
	}
}

// TestLingeringGroups: a command that exits leaving a background job keeps
// its group listed until the job ends (then the sweep drops it) or KillAll
// kills it.
func TestLingeringGroups(t *testing.T) {
	defer func(d time.Duration) { sweepEvery = d }(sweepEvery)
	sweepEvery = 20 * time.Millisecond
	before := groups.count()

	// The short job outlives the three starts below by far, even on a
	// loaded machine (0.3 s left little room for three forks and execs
	// before the count; a sweep drops its group once it ends).
	short := exec.Command("sh", "-c", "sleep 1 & exit 0")
	long := exec.Command("sh", "-c", "sleep "+sleepArg(20)+" & exit 0")
	quick := exec.Command("true")
	for _, cmd := range []*exec.Cmd{short, long, quick} {
		if err := Start(cmd); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		Exited(cmd.Process.Pid)
	}
	if n := groups.count() - before; n != 2 {
		t.Fatalf("%d groups listed, want the two with a background job", n)
	}
	waitFor(t, "the short job's group to be dropped", 5*time.Second, func() bool { return groups.count()-before == 1 })
	job := procs(t, "sleep "+sleepArg(20))
	if len(job) != 1 {
		t.Fatalf("background job: %v", job)
	}
	KillAll()
	waitFor(t, "KillAll to kill the background job", 5*time.Second, func() bool { return gone(job[0]) })
	if n := groups.count(); n != 0 {
		t.Errorf("%d groups listed after KillAll", n)
	}
}

func TestKillGroup(t *testing.T) {
	a, b := sleepArg(21), sleepArg(22)
	cmd := exec.Command("sh", "-c", "sleep "+a+" & sleep "+b+"; :")
	if err := Start(cmd); err != nil {
		t.Fatal(err)
	}
	var pids []int
	waitFor(t, "both sleeps", 5*time.Second, func() bool {
		pids = append(procs(t, "sleep "+a), procs(t, "sleep "+b)...)
		return len(pids) == 2
	})
	if err := KillGroup(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	waitFor(t, "the group to die", 5*time.Second, func() bool { return gone(pids[0]) && gone(pids[1]) })

	// A group that is gone (a leader without children, reaped) is
	// ErrProcessDone, which exec.Cmd.Cancel takes as success.
	quick := exec.Command("true")
	if err := Start(quick); err != nil {
		t.Fatal(err)
	}
	quick.Wait()
	if err := KillGroup(quick.Process.Pid); !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("killing a gone group: %v", err)
	}
}

// TestGuardScript drives a guard directly: at end of input it kills the
// groups still listed, not the ones taken off the list.
func TestGuardScript(t *testing.T) {
	g, err := startGuard()
	if err != nil {
		t.Fatal(err)
	}
	var cmds []*exec.Cmd
	for i := range 3 {
		cmd := exec.Command("sleep", sleepArg(30+i))
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Process.Kill()
		cmds = append(cmds, cmd)
		g.send('+', cmd.Process.Pid)
	}
	g.send('-', cmds[1].Process.Pid)
	g.send('-', 999999999) // never listed: ignored
	g.w.Close()
	for _, i := range []int{0, 2} {
		cmds[i].Wait()
	}
	time.Sleep(100 * time.Millisecond)
	if gone(cmds[1].Process.Pid) {
		t.Error("the group taken off the list was killed")
	}
}

// TestKilledBeforeListing: a SIGKILL between a child's start and the
// guard's "+" line for its group leaves nothing running, as the child is
// held at a gate until it is listed (its shell would otherwise have forked
// the sleeps within that window, out of the parent-death signal's reach).
func TestKilledBeforeListing(t *testing.T) {
	a := sleepArg(5)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CHILDPROC_HELPER=window", "CHILDPROC_COMMAND=sleep "+a+" & sleep "+a+"; :")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		for _, pid := range procs(t, "sleep "+a) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		t.Fatalf("helper said %q, %v", line, err)
	}
	time.Sleep(200 * time.Millisecond) // ungated, the shell has forked by now
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	time.Sleep(300 * time.Millisecond)
	if left := procs(t, "sleep "+a); len(left) > 0 {
		t.Fatalf("processes %v started before their group was guarded outlived the parent", left)
	}
}
