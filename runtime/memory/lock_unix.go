//go:build unix

package memory

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// lockFile takes an flock on f, shared or exclusive, polling so that a
// holder that never lets go (a hung process) costs a clear error after
// timeout instead of a hang. flock belongs to the open file, so two Memory
// values of one process exclude each other like two processes do.
func lockFile(f *os.File, exclusive bool, timeout time.Duration) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	deadline := time.Now().Add(timeout)
	wait := time.Millisecond
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case !errors.Is(err, syscall.EWOULDBLOCK):
			return err
		case time.Now().After(deadline):
			return errLocked
		}
		time.Sleep(wait)
		wait = min(2*wait, 20*time.Millisecond)
	}
}

func unlockFile(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
