//go:build unix

package session

import (
	"errors"
	"os"
	"syscall"
)

// kill(pid, 0) tells a dead holder from a live one on this host.
const canProbePIDs = true

// lockGuard holds an exclusive flock on the guard file. The guard file is
// never removed: unlinking it would let two processes lock different inodes.
func lockGuard(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// pidAlive reports whether pid exists on this host. EPERM means it exists
// but belongs to someone else, which still makes the lease live.
func pidAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
