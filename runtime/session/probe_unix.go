//go:build unix

package session

import (
	"errors"
	"os"
	"syscall"
)

// kill(pid, 0) tells a dead holder from a live one on this host.
const canProbePIDs = true

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
