package commands

import (
	"io"
	"os"
	"os/exec"
	"os/signal"

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
	// Color is colour on stderr (spinners, hints); OutColor on stdout
	// (a transcript shown on the terminal).
	Color, OutColor bool
	// Pager is the command long output goes through on a terminal
	// ($OPENHEIM_PAGER, else $PAGER, else less); "" or "cat" for none.
	Pager string

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
	s.OutColor = s.OutTTY && !noColor && os.Getenv("TERM") != "dumb"
	s.Pager = "less"
	for _, v := range []string{"OPENHEIM_PAGER", "PAGER"} {
		if p, ok := os.LookupEnv(v); ok {
			s.Pager = p
			break
		}
	}
	return s
}

// StartPager sends Out through the pager until stop is called, when
// stdout is a terminal and a pager is set: long output (a transcript)
// can then be scrolled. less gets LESS=FRX unless LESS is set: colours
// pass (-R), one screen's worth prints and exits (-F, -X). stop waits for
// the pager, which the user quits; Ctrl-C meanwhile is the pager's.
func (s *IOStreams) StartPager() (stop func()) {
	if !s.OutTTY || s.Pager == "" || s.Pager == "cat" {
		return func() {}
	}
	cmd := exec.Command("sh", "-c", s.Pager)
	cmd.Env = os.Environ()
	if _, ok := os.LookupEnv("LESS"); !ok {
		cmd.Env = append(cmd.Env, "LESS=FRX")
	}
	cmd.Stdout, cmd.Stderr = s.Out, s.ErrOut
	in, err := cmd.StdinPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		return func() {}
	}
	signal.Ignore(os.Interrupt)
	out := s.Out
	s.Out = in
	return func() {
		in.Close()
		cmd.Wait()
		s.Out = out
		signal.Reset(os.Interrupt)
	}
}

// Dim wraps s in the faint style when colour is on.
func (s *IOStreams) Dim(text string) string {
	if !s.Color {
		return text
	}
	return "\x1b[2m" + text + "\x1b[0m"
}
