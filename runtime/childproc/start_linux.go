package childproc

import (
	"fmt"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// prepare puts the child in a group of its own and has the kernel SIGKILL
// it when its parent dies.
func prepare(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// The parent-death signal fires when the *thread* that forked the child
// ends, not the process (prctl(2); go.dev/issue/27505). Go ends a thread
// only when a goroutine locked to it returns without unlocking, which any
// library may do; a child forked from such a thread would be killed with
// openheim still running. So every child is forked from one goroutine that
// locks its thread and never returns: that thread ends only with openheim.
var (
	spawnOnce sync.Once
	spawns    chan spawnReq
)

type spawnReq struct {
	start func() error
	done  chan spawnResult
}

type spawnResult struct {
	err   error
	panic any
}

// spawn runs start on the spawning thread and returns its result; a panic
// in start is raised again in the caller, so that it cannot end the
// spawning goroutine (and with its thread, every child).
func spawn(start func() error) error {
	spawnOnce.Do(func() {
		spawns = make(chan spawnReq)
		go spawner()
	})
	done := make(chan spawnResult, 1)
	spawns <- spawnReq{start: start, done: done}
	res := <-done
	if res.panic != nil {
		panic(fmt.Sprintf("childproc: starting a child: %v", res.panic))
	}
	return res.err
}

// spawner owns the spawning thread for the life of the process: it never
// unlocks it and never returns.
func spawner() {
	runtime.LockOSThread()
	for req := range spawns {
		req.done <- runSpawn(req.start)
	}
}

func runSpawn(start func() error) (res spawnResult) {
	defer func() {
		if p := recover(); p != nil {
			res.panic = p
		}
	}()
	return spawnResult{err: start()}
}
