//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package commands

import "io"

// hideTyping does nothing where termios is not available.
func hideTyping(io.Reader) (restore func()) { return func() {} }
