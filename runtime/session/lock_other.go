//go:build !unix

package session

import "os"

// Without kill(pid, 0) a same-host lease is judged by age, like a remote one.
const canProbePIDs = false

// lockGuard is a no-op where flock is unavailable: the in-process check and
// the lease itself still apply, only the cross-process race is left open.
func lockGuard(string) (unlock func(), err error) { return func() {}, nil }

func pidAlive(int) bool { return true }

// linkCount is unknown here, so spare files are never reused.
func linkCount(os.FileInfo) uint64 { return 0 }
