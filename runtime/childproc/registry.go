package childproc

import (
	"log/slog"
	"os/exec"
	"sync"
	"time"
)

// sweepEvery is how often groups whose leader has exited are probed. Once
// a group is empty (zombies waiting to be reaped still hold its id) the id
// is free for the system to give someone else's group, which must never be
// killed: such a group is dropped from the list at the next probe, so only
// a system that runs through every pid within one interval could hand the
// id out first.
var sweepEvery = 2 * time.Second

// registry is the list of live groups, mirrored to the guard.
type registry struct {
	guardOnce sync.Once
	guard     *guard // nil where there is none

	mu       sync.Mutex
	live     map[int]bool // group id -> its leader has exited, other members remain
	sweeping bool
}

var groups = &registry{live: map[int]bool{}}

// afterSpawn, when set (tests), runs between a child's start and its
// listing: the window a SIGKILL of openheim must not leave anything in.
var afterSpawn func(*exec.Cmd)

// start runs start and lists the new group. The lock is held throughout so
// that a kill racing with the start (exec's Cancel runs as soon as the
// process exists) is listed after it, never before.
func (r *registry) start(cmd *exec.Cmd, start func() error) error {
	r.guardOnce.Do(func() {
		var err error
		if r.guard, err = startGuard(); err != nil {
			slog.Debug("childproc: no guard; children of a killed openheim may outlive it", "error", err)
		}
	})
	var g *gate
	if r.guard != nil {
		g = hold(cmd)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := spawn(start); err != nil {
		g.close()
		return err
	}
	if afterSpawn != nil {
		afterSpawn(cmd)
	}
	if cmd.Process != nil {
		r.live[cmd.Process.Pid] = false
		r.guard.send('+', cmd.Process.Pid)
	}
	g.open() // only now may the child run its program
	return nil
}

func (r *registry) exited(pid int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.live[pid]; !ok {
		return
	}
	if groupGone(pid) {
		r.releaseLocked(pid)
		return
	}
	r.live[pid] = true
	if !r.sweeping {
		r.sweeping = true
		go r.sweep(sweepEvery)
	}
}

// sweep drops the lingering groups that have emptied; it returns once
// none is left.
func (r *registry) sweep(every time.Duration) {
	for {
		time.Sleep(every)
		r.mu.Lock()
		left := 0
		for pid, lingering := range r.live {
			switch {
			case !lingering:
			case groupGone(pid):
				r.releaseLocked(pid)
			default:
				left++
			}
		}
		if left == 0 {
			r.sweeping = false
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
	}
}

func (r *registry) release(pid int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.releaseLocked(pid)
}

func (r *registry) releaseLocked(pid int) {
	if _, ok := r.live[pid]; ok {
		delete(r.live, pid)
		r.guard.send('-', pid)
	}
}

func (r *registry) killAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for pid := range r.live {
		_ = signalGroup(pid, sigKill)
		r.releaseLocked(pid)
	}
}

// count is how many groups are listed (for tests).
func (r *registry) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.live)
}
