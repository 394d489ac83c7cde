package memory

import (
	"time"

	"github.com/gofrs/flock"
)

// newLock is the store's lock file (flock on unix, LockFileEx on Windows).
// The lock belongs to an open of the file, so two Memory values of one
// process exclude each other as two processes do; one Memory's operations
// take it one at a time (under Memory.mu), as a Flock value requires.
func newLock(path string) *flock.Flock {
	return flock.New(path, flock.SetPermissions(0o600))
}

// lockStore takes the lock, shared or exclusive, polling so that a holder
// that never lets go (a hung process) costs a clear error after timeout
// instead of a hang.
func lockStore(fl *flock.Flock, exclusive bool, timeout time.Duration) error {
	try := fl.TryRLock
	if exclusive {
		try = fl.TryLock
	}
	deadline := time.Now().Add(timeout)
	wait := time.Millisecond
	for {
		ok, err := try()
		switch {
		case err != nil:
			return err
		case ok:
			return nil
		case time.Now().After(deadline):
			return errLocked
		}
		time.Sleep(wait)
		wait = min(2*wait, 20*time.Millisecond)
	}
}
