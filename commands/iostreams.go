package commands

import (
	"io"
	"os"

	"github.com/mattn/go-isatty"
)

// IOStreams decides in one place where output goes and whether it is a
// terminal, so commands never look at os.Stdout themselves (and tests can
// hand them buffers).
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	InTTY, OutTTY, ErrTTY bool
	Color                 bool
}

// System returns the process's streams.
func System() *IOStreams {
	tty := func(f *os.File) bool { return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()) }
	s := &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		InTTY: tty(os.Stdin), OutTTY: tty(os.Stdout), ErrTTY: tty(os.Stderr)}
	_, noColor := os.LookupEnv("NO_COLOR")
	s.Color = s.ErrTTY && !noColor && os.Getenv("TERM") != "dumb"
	return s
}

// Dim wraps s in the faint style when colour is on.
func (s *IOStreams) Dim(text string) string {
	if !s.Color {
		return text
	}
	return "\x1b[2m" + text + "\x1b[0m"
}
