//go:build !unix

package confine

import "syscall"

// Without FIFOs to block on, only the flag that exists is passed.
const (
	oNonblock  = syscall.O_NONBLOCK
	oDirectory = 0
)
