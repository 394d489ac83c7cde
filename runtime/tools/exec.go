package tools

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/openheim/openheim/runtime/childproc"
	"github.com/openheim/openheim/runtime/confine"
	"github.com/openheim/openheim/runtime/llm"
)

const (
	// DefaultCommandTimeout is promised to the model in the tool description.
	DefaultCommandTimeout = 120 * time.Second
	// maxStreamBytes is the per-stream capture limit promised in the
	// tool description.
	maxStreamBytes = 64 << 10
	// defaultWaitDelay is how long output from a backgrounded process may
	// keep the pipes open after the shell itself has exited.
	defaultWaitDelay = time.Second
)

// ExecuteCommand runs a shell command in the work directory.
type ExecuteCommand struct {
	// Root is the work directory the command starts in. A shell is not
	// confined by it: that is why the tool is off unless allowed.
	Root *confine.Root
	// Timeout kills the command's whole process group; zero means
	// DefaultCommandTimeout.
	Timeout time.Duration
	// WaitDelay bounds how long pipes held open by background processes
	// delay the result; zero means one second.
	WaitDelay time.Duration
}

func (*ExecuteCommand) Spec() llm.ToolSpec {
	return spec(executeCommandName, executeCommandDescription, executeCommandParams)
}

func (*ExecuteCommand) Kind() string { return KindExecute }

func (t *ExecuteCommand) Run(ctx context.Context, raw json.RawMessage) Result {
	a := parseArgs(raw)
	command := a.str("command", true)
	if err := a.Err(); err != nil {
		return Errorf("%v", err)
	}
	if strings.TrimSpace(command) == "" {
		return Errorf("command is empty")
	}
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = DefaultCommandTimeout
	}
	waitDelay := t.WaitDelay
	if waitDelay <= 0 {
		waitDelay = defaultWaitDelay
	}

	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, "sh", "-c", command)
	cmd.Dir = t.Root.Path()
	// Stdin stays nil, which exec wires to /dev/null: a command waiting
	// for input would otherwise sit until the timeout.
	var stdout, stderr capWriter
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// The command leads its own process group (childproc.Start) so that
	// cancelling kills everything it started, not just the shell, and
	// nothing it started outlives openheim.
	cmd.Cancel = func() error { return childproc.KillGroup(cmd.Process.Pid) }
	// Without WaitDelay a background child that inherited stdout would
	// keep Wait blocked until that child exits.
	cmd.WaitDelay = waitDelay

	err := childproc.Start(cmd)
	if err == nil {
		err = cmd.Wait()
		// Background jobs it left stay until openheim exits.
		childproc.Exited(cmd.Process.Pid)
	}
	var note string
	switch {
	case ctx.Err() != nil:
		note = "[command cancelled; its process group was killed]"
	case runCtx.Err() != nil:
		note = "[command timed out after " + timeout.String() + " and was killed]"
	}
	var exitErr *exec.ExitError
	if err != nil && note == "" && !errors.As(err, &exitErr) && !errors.Is(err, exec.ErrWaitDelay) {
		return Errorf("failed to run command: %v", err)
	}
	code := 0
	if cmd.ProcessState != nil {
		code = cmd.ProcessState.ExitCode()
	}
	return formatCommandResult(stdout.String(), stderr.String(), code, note)
}

// formatCommandResult lays out stdout, then stderr and the exit code only
// when they say something, so the common case reads like a terminal.
func formatCommandResult(stdout, stderr string, code int, note string) Result {
	var b strings.Builder
	section := func(s string) {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		b.WriteString(s)
	}
	if stdout != "" {
		section(stdout)
	}
	if stderr != "" {
		section("[stderr]\n" + stderr)
	}
	if note != "" {
		section(note)
	} else if code != 0 {
		section(sprintf("[exit code %d]", code))
	}
	if b.Len() == 0 {
		return Result{Content: "(no output)"}
	}
	return Result{Content: b.String(), IsError: note != "" || code != 0}
}

// capWriter keeps the first maxStreamBytes written and counts the rest, so
// a chatty command cannot exhaust memory or the model's context.
type capWriter struct {
	mu      sync.Mutex
	buf     []byte
	dropped int64
}

func (w *capWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	room := maxStreamBytes - len(w.buf)
	if room > len(p) {
		room = len(p)
	}
	w.buf = append(w.buf, p[:room]...)
	w.dropped += int64(len(p) - room)
	return len(p), nil
}

func (w *capWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.dropped == 0 {
		return string(w.buf)
	}
	kept := trimPartialRune(w.buf)
	dropped := w.dropped + int64(len(w.buf)-len(kept))
	return sprintf("%s\n[... output truncated: %d more bytes not shown]\n", kept, dropped)
}
