//go:build unix

package session

import (
	"errors"
	"os"
	"sync"
	"syscall"
)

// kill(pid, 0) tells a dead holder from a live one on this host.
const canProbePIDs = true

// lockGuard holds an exclusive flock on the guard file and returns it open
// (it also keeps the history dir's lease counter). The guard file is never
// removed: unlinking it would let two processes lock different inodes.
//
// The file stays open for the life of the process and a mutex serialises
// this process's holders (flock does not exclude holders of one open file):
// opening it with O_CREAT for every lease would take the history
// directory's lock each time, which a server running many turns contends on.
func lockGuard(path string) (f *os.File, unlock func(), err error) {
	g := guardFor(path)
	g.mu.Lock()
	if err := g.open(path); err != nil {
		g.mu.Unlock()
		return nil, nil, err
	}
	if err := flock(g.f, syscall.LOCK_EX); err != nil {
		g.mu.Unlock()
		return nil, nil, err
	}
	return g.f, func() {
		flock(g.f, syscall.LOCK_UN)
		g.mu.Unlock()
	}, nil
}

// lockFile holds an exclusive flock on f, an open file of its own (flock
// excludes other open files of the same inode, in this process too).
func lockFile(f *os.File) (unlock func(), err error) {
	if err := flock(f, syscall.LOCK_EX); err != nil {
		return nil, err
	}
	return func() { flock(f, syscall.LOCK_UN) }, nil
}

// tryLockFile is lockFile without waiting: busy says another holds it.
func tryLockFile(f *os.File) (unlock func(), busy bool, err error) {
	err = flock(f, syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return nil, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	return func() { flock(f, syscall.LOCK_UN) }, false, nil
}

func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

type guardFile struct {
	mu sync.Mutex
	f  *os.File
}

var guards sync.Map // path -> *guardFile

func guardFor(path string) *guardFile {
	g, _ := guards.LoadOrStore(path, &guardFile{})
	return g.(*guardFile)
}

// open (re)opens the guard unless the open file is still the one at path
// (a history dir removed and made again has a new guard).
func (g *guardFile) open(path string) error {
	if g.f != nil {
		st, err := os.Stat(path)
		if fi, ferr := g.f.Stat(); err == nil && ferr == nil && os.SameFile(st, fi) {
			return nil
		}
		g.f.Close()
		g.f = nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	g.f = f
	return nil
}

// pidAlive reports whether pid exists on this host. EPERM means it exists
// but belongs to someone else, which still makes the lease live.
func pidAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// linkCount is how many names a file has.
func linkCount(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 0 // unknown: never reuse
}
