//go:build !unix

package memory

import (
	"os"
	"time"
)

// Without flock, only the Memory's own mutex serialises access: one process
// at a time should use a memory directory on these systems.
func lockFile(f *os.File, exclusive bool, timeout time.Duration) error { return nil }

func unlockFile(f *os.File) {}
