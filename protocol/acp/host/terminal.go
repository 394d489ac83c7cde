//go:build unix

package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/protocol/jsonrpc"
	"github.com/openheim/openheim/runtime/childproc"
	"github.com/openheim/openheim/runtime/confine"
)

const (
	// Every live terminal holds its output in memory, hence a cap on what
	// an agent may ask for and on how many terminals it may leave open.
	defaultTermOutputLimit = 1 << 20
	maxTermOutputLimit     = 16 << 20
	maxLiveTerminals       = 64
	// termWaitDelay bounds how long a background child still holding the
	// output pipe delays the exit status once the command itself ended.
	termWaitDelay = time.Second
)

// terminals runs the commands external agents start with terminal/*: each
// in its own process group, cwd confined to root, output kept up to a byte
// limit (older output dropped from the front at a character boundary), a
// session's terminals killed and released when its turn or session ends.
type terminals struct {
	root   *confine.Root
	sbErr  error // root unusable: every create fails with it
	log    *slog.Logger
	mu     sync.Mutex
	byID   map[string]*hostTerminal
	seq    int
	closed bool
}

// hostTerminal is one command; status and groupGone are set before done.
type hostTerminal struct {
	id, sessionID string
	cmd           *exec.Cmd
	out           *tailBuffer
	done          chan struct{}
	status        termExitStatus
	groupGone     atomic.Bool
}

// termExitStatus is ACP's TerminalExitStatus and wait_for_exit result: one
// of exitCode and signal ("SIGKILL") is set, the other null.
type termExitStatus struct {
	ExitCode *int    `json:"exitCode"`
	Signal   *string `json:"signal"`
}

type termCreateRequest struct {
	SessionID       string            `json:"sessionId"`
	Command         string            `json:"command"`
	Args            []string          `json:"args"`
	Env             []acp.EnvVariable `json:"env"`
	Cwd             string            `json:"cwd"`
	OutputByteLimit *uint64           `json:"outputByteLimit"`
}

func newTerminals(root string, log *slog.Logger) *terminals {
	if log == nil {
		log = slog.Default()
	}
	r, err := confine.Open(root)
	return &terminals{root: r, sbErr: err, log: log, byID: map[string]*hostTerminal{}}
}

// cwd is the absolute path a terminal's cwd names inside the root, links
// resolved through the root; one leading out is refused.
func (t *terminals) cwd(p string) (string, error) {
	name, err := t.root.Real(p)
	if err != nil {
		return "", err
	}
	return t.root.Abs(name), nil
}

// create serves terminal/create -> {terminalId}. The command outlives the
// request, so the request's context is not used.
func (t *terminals) create(_ context.Context, params json.RawMessage) (any, error) {
	var r termCreateRequest
	if err := decodeHostParams(params, &r); err != nil {
		return nil, err
	}
	if t.sbErr != nil {
		return nil, hostError(jsonrpc.Internal, "%v", t.sbErr)
	}
	dir, err := t.cwd(r.Cwd) // "" is root
	switch {
	case r.SessionID == "":
		return nil, hostError(jsonrpc.InvalidParams, "sessionId is required")
	case strings.TrimSpace(r.Command) == "":
		return nil, hostError(jsonrpc.InvalidParams, "command is required")
	case err != nil:
		return nil, hostError(jsonrpc.InvalidParams, "cwd: %v", err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, hostError(jsonrpc.InvalidParams, "cwd %s is not a directory", r.Cwd)
	}
	env := os.Environ()
	for _, v := range r.Env {
		env = append(env, v.Name+"="+v.Value) // exec keeps the last of duplicates
	}
	name, args := termArgv(r.Command, r.Args, dir)
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env, cmd.WaitDelay = dir, env, termWaitDelay
	out := &tailBuffer{limit: defaultTermOutputLimit}
	if r.OutputByteLimit != nil {
		out.limit = int(min(*r.OutputByteLimit, maxTermOutputLimit))
	}
	// One writer for both streams: exec then shares a single pipe, so they
	// interleave in the order the command wrote them.
	cmd.Stdout, cmd.Stderr = out, out

	// Started under the lock so that closeAll and the limit never miss a
	// half-registered terminal; a start takes about a millisecond.
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, hostError(jsonrpc.Internal, "the host is shutting down")
	}
	if len(t.byID) >= maxLiveTerminals {
		return nil, hostError(jsonrpc.Internal, "too many terminals (%d live); release some first", len(t.byID))
	}
	if err := childproc.Start(cmd); err != nil { // its own group, dying with openheim
		return nil, hostError(jsonrpc.Internal, "cannot start %s: %v", r.Command, err)
	}
	t.seq++
	term := &hostTerminal{id: fmt.Sprintf("term_%d", t.seq), sessionID: r.SessionID, cmd: cmd, out: out, done: make(chan struct{})}
	t.byID[term.id] = term
	t.log.Debug("acp host: terminal started", "terminal", term.id, "session", r.SessionID, "command", r.Command, "pid", cmd.Process.Pid)
	go func() { // reaps released terminals too: no zombies
		err := cmd.Wait()
		childproc.Exited(cmd.Process.Pid)
		// Probed at once, before the id can be handed out again: a group
		// found empty is never signalled later, when it might be another's.
		term.groupGone.Store(errors.Is(syscall.Kill(-cmd.Process.Pid, 0), syscall.ESRCH))
		term.status = termStatus(cmd.ProcessState)
		close(term.done)
		t.log.Debug("acp host: terminal exited", "terminal", term.id, "err", err)
	}()
	return map[string]string{"terminalId": term.id}, nil
}

// termShellMeta are characters of shell lines, not of executable names.
const termShellMeta = " \t\n|&;<>()$`\\\"'*?[]#~={}%!"

// termArgv runs the command directly, except an argument-less command that
// reads like a shell line and names no executable file: claude-agent-acp
// and others send a whole Bash line as "command", relying on the client's
// shell (Zed runs every terminal through one). exec could only fail there.
func termArgv(command string, args []string, dir string) (string, []string) {
	if len(args) > 0 || !strings.ContainsAny(command, termShellMeta) {
		return command, args
	}
	if p := command; strings.Contains(p, "/") {
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if _, err := exec.LookPath(p); err == nil {
			return command, nil
		}
	}
	return "/bin/sh", []string{"-c", command}
}

// onTerminal runs f on the terminal a request names; another session's
// terminal is as unknown as a released one.
func (t *terminals) onTerminal(params json.RawMessage, f func(*hostTerminal) (any, error)) (any, error) {
	var r struct {
		SessionID  string `json:"sessionId"`
		TerminalID string `json:"terminalId"`
	}
	if err := decodeHostParams(params, &r); err != nil {
		return nil, err
	}
	t.mu.Lock()
	term := t.byID[r.TerminalID]
	t.mu.Unlock()
	if term == nil || term.sessionID != r.SessionID {
		return nil, hostError(jsonrpc.InvalidParams, "unknown terminal %q", r.TerminalID)
	}
	return f(term)
}

// output serves terminal/output -> {output, truncated, exitStatus?}, the
// exit status omitted while the command runs.
func (t *terminals) output(_ context.Context, params json.RawMessage) (any, error) {
	return t.onTerminal(params, func(term *hostTerminal) (any, error) {
		var st *termExitStatus
		select {
		case <-term.done:
			st = &term.status
		default:
		}
		// Exit is checked first: after it the output is complete, and a
		// partial character at its end is the command's own.
		text, truncated := term.out.snapshot(st != nil)
		return struct {
			Output     string          `json:"output"`
			Truncated  bool            `json:"truncated"`
			ExitStatus *termExitStatus `json:"exitStatus,omitempty"`
		}{text, truncated, st}, nil
	})
}

// waitForExit serves terminal/wait_for_exit -> {exitCode, signal}, blocking
// until the command ends or the request is cancelled.
func (t *terminals) waitForExit(ctx context.Context, params json.RawMessage) (any, error) {
	return t.onTerminal(params, func(term *hostTerminal) (any, error) {
		select {
		case <-term.done:
			return term.status, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
}

// kill serves terminal/kill -> {}: the process group dies, the terminal
// stays so its output and exit status can still be read.
func (t *terminals) kill(_ context.Context, params json.RawMessage) (any, error) {
	return t.onTerminal(params, func(term *hostTerminal) (any, error) {
		term.killGroup()
		return acp.EmptyResponse{}, nil
	})
}

// release serves terminal/release -> {}: kill if running, then forget.
func (t *terminals) release(_ context.Context, params json.RawMessage) (any, error) {
	return t.onTerminal(params, func(term *hostTerminal) (any, error) {
		t.drop(func(x *hostTerminal) bool { return x == term })
		return acp.EmptyResponse{}, nil
	})
}

// releaseSession kills and releases every terminal of a session whose turn
// or session ended: an agent cancelled mid-command often never releases.
func (t *terminals) releaseSession(sessionID string) {
	t.drop(func(x *hostTerminal) bool { return x.sessionID == sessionID })
}

// closeAll kills and releases every terminal and refuses new ones.
func (t *terminals) closeAll() {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	t.drop(func(*hostTerminal) bool { return true })
}

// count is the number of live (unreleased) terminals.
func (t *terminals) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.byID)
}

func (t *terminals) drop(match func(*hostTerminal) bool) {
	var gone []*hostTerminal
	t.mu.Lock()
	for id, term := range t.byID {
		if match(term) {
			delete(t.byID, id)
			gone = append(gone, term)
		}
	}
	t.mu.Unlock()
	for _, term := range gone {
		term.killGroup()
		t.log.Debug("acp host: terminal released", "terminal", term.id, "session", term.sessionID)
	}
}

// killGroup kills the whole group, even after the command itself exited:
// what it left running in the background must not outlive the terminal.
func (term *hostTerminal) killGroup() {
	if term.groupGone.Load() {
		return
	}
	err := syscall.Kill(-term.cmd.Process.Pid, syscall.SIGKILL)
	if err != nil && !errors.Is(err, syscall.ESRCH) {
		term.cmd.Process.Kill() // at least the command itself
	}
}

// termStatus reports both fields null when there is no state to read (the
// child was reaped behind exec's back), rather than crashing the host.
func termStatus(ps *os.ProcessState) termExitStatus {
	if ps == nil {
		return termExitStatus{}
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		name := unix.SignalName(ws.Signal())
		if name == "" {
			name = fmt.Sprintf("SIG%d", int(ws.Signal()))
		}
		return termExitStatus{Signal: &name}
	}
	code := ps.ExitCode()
	return termExitStatus{ExitCode: &code}
}

// tailBuffer keeps the last limit bytes written. It runs up to half a
// limit over before compacting, so dropping from the front costs amortized
// O(1) per byte rather than a full copy on every write.
type tailBuffer struct {
	mu      sync.Mutex
	limit   int
	buf     []byte
	dropped bool
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	if len(p) > b.limit {
		p, b.dropped = p[len(p)-b.limit:], true
	}
	b.buf = append(b.buf, p...)
	if len(b.buf) > b.limit+max(b.limit/2, 4096) {
		b.buf, b.dropped = append(b.buf[:0], b.buf[len(b.buf)-b.limit:]...), true
	}
	return n, nil
}

// snapshot returns the retained output and whether any was dropped. After
// a cut the text starts at the next whole character; while the command
// runs, a character half written at the end waits for the next call.
func (b *tailBuffer) snapshot(final bool) (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	view, truncated := b.buf, b.dropped
	if len(view) > b.limit {
		view, truncated = view[len(view)-b.limit:], true
	}
	for i := 0; truncated && i < utf8.UTFMax-1 && len(view) > 0 && !utf8.RuneStart(view[0]); i++ {
		view = view[1:]
	}
	if !final {
		for i := len(view) - 1; i >= 0 && i >= len(view)-utf8.UTFMax; i-- {
			if utf8.RuneStart(view[i]) {
				if !utf8.FullRune(view[i:]) {
					view = view[:i]
				}
				break
			}
		}
	}
	return string(view), truncated
}
