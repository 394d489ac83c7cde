//go:build !unix

package session

import "os"

// Without kill(pid, 0) a same-host lease is judged by age, like a remote one.
const canProbePIDs = false

// lockGuard only opens the guard file (it keeps the lease counter) where
// flock is unavailable: the in-process check, the lease and the fence's
// check still apply, only the cross-process races are left open.
func lockGuard(path string) (f *os.File, unlock func(), err error) {
	f, err = os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, nil, err
	}
	return f, func() { f.Close() }, nil
}

// lockFile does nothing here; see lockGuard.
func lockFile(*os.File) (unlock func(), err error) { return func() {}, nil }

func tryLockFile(*os.File) (unlock func(), busy bool, err error) { return func() {}, false, nil }

func pidAlive(int) bool { return true }

// linkCount is unknown here, so spare files are never reused.
func linkCount(os.FileInfo) uint64 { return 0 }
