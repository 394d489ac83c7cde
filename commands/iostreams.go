package commands

import (
	"io"
	"os"

	"github.com/mattn/go-isatty"

	"github.com/openheim/openheim/runtime/redact"
)

// IOStreams decides in one place where output goes and whether it is a
// terminal, so commands never look at os.Stdout themselves (and tests can
// hand them buffers).
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	InTTY, OutTTY, ErrTTY bool
	// InPiped says stdin is a pipe or a file: it carries input (a
	// terminal or /dev/null does not), which prompt attaches to the prompt.
	InPiped bool
	Color   bool

	red    *redact.Redactor // the loaded config's secrets; nil before or without
	rawErr io.Writer        // ErrOut before it was wrapped
}

// Redactor masks the secrets of the config the command loaded (nil, which
// masks nothing, before one is loaded). Output that may quote an error on
// stdout (NDJSON, the chat transcript) passes it.
func (s *IOStreams) Redactor() *redact.Redactor { return s.red }

// useRedactor makes r mask everything written to ErrOut from now on (error
// lines, warnings, hints: each is one Write) and every log record. Stdout
// is not wrapped: it carries protocols (ACP, MCP over stdio) whose content
// must reach the peer unchanged; its human and NDJSON writers apply
// Redactor themselves.
func (s *IOStreams) useRedactor(r *redact.Redactor) {
	if s.rawErr == nil {
		s.rawErr = s.ErrOut
	}
	s.red = r
	s.ErrOut = r.Writer(s.rawErr)
	logRedactor.Store(r)
}

// System returns the process's streams.
func System() *IOStreams {
	tty := func(f *os.File) bool { return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()) }
	s := &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		InTTY: tty(os.Stdin), OutTTY: tty(os.Stdout), ErrTTY: tty(os.Stderr)}
	if fi, err := os.Stdin.Stat(); err == nil {
		m := fi.Mode()
		s.InPiped = !s.InTTY && (m&(os.ModeNamedPipe|os.ModeSocket) != 0 || m.IsRegular())
	}
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
