//go:build unix

package confine

import "syscall"

// oNonblock makes an open of a FIFO return at once instead of waiting for
// a writer; oDirectory makes the kernel refuse anything but a directory
// before opening it.
const (
	oNonblock  = syscall.O_NONBLOCK
	oDirectory = syscall.O_DIRECTORY
)
