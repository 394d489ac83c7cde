//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package commands

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// hideTyping turns the terminal's echo off while a turn streams, so keys
// typed ahead do not land in the middle of the answer; they are kept and
// show up at the next prompt. Ctrl-C still interrupts (ISIG stays on).
func hideTyping(in io.Reader) (restore func()) {
	f, ok := in.(*os.File)
	if !ok {
		return func() {}
	}
	fd := int(f.Fd())
	old, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return func() {}
	}
	quiet := *old
	quiet.Lflag &^= unix.ECHO
	if unix.IoctlSetTermios(fd, ioctlSetTermios, &quiet) != nil {
		return func() {}
	}
	return func() { unix.IoctlSetTermios(fd, ioctlSetTermios, old) }
}
