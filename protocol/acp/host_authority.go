//go:build unix

package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/openheim/openheim/protocol/jsonrpc"
	"github.com/openheim/openheim/runtime/tools"
)

// The host's authority over the work directory: what an external agent may
// read, write and run when it asks its client (openheim) through fs/* and
// terminal/*. Both are held to the same sandbox as openheim's own file
// tools, so driving Claude Code or Codex grants nothing the built-in agent
// could not do.

const (
	// hostMaxReadBytes keeps one fs/read_text_file answer (which the agent
	// usually puts in its model's context) from loading a huge file.
	hostMaxReadBytes = 10 << 20
	// defaultTermOutputLimit applies when terminal/create gives no
	// outputByteLimit; maxTermOutputLimit caps what an agent may ask for,
	// since every live terminal holds its output in memory.
	defaultTermOutputLimit = 1 << 20
	maxTermOutputLimit     = 16 << 20
	// maxLiveTerminals bounds unreleased terminals per host: an agent that
	// never releases would otherwise pile up processes and buffers.
	maxLiveTerminals = 64
	// termWaitDelay is how long a background child still holding the
	// output pipe may delay the exit status after the command itself ended.
	termWaitDelay = time.Second
)

// hostError puts the reason in the message itself: agents built on the
// TypeScript SDK show their model error.message and drop data, and a bare
// "Invalid params" gives the model nothing to act on.
func hostError(code int, format string, a ...any) *jsonrpc.Error {
	return &jsonrpc.Error{Code: code, Message: jsonrpc.Message(code) + ": " + fmt.Sprintf(format, a...)}
}

// decodeHostParams treats absent params as {} so a missing required field
// is reported by name rather than as a JSON syntax error.
func decodeHostParams(params json.RawMessage, v any) error {
	if len(bytes.TrimSpace(params)) == 0 {
		return nil
	}
	if err := json.Unmarshal(params, v); err != nil {
		return hostError(jsonrpc.InvalidParams, "%v", err)
	}
	return nil
}

// hostFS answers an external agent's fs/* requests, confined to the work
// directory (the same sandbox as openheim's file tools: no path outside
// root, symlinks resolved).
type hostFS struct {
	sb *tools.Sandbox
}

func newHostFS(root string) (*hostFS, error) {
	sb, err := tools.NewSandbox(root)
	if err != nil {
		return nil, err
	}
	return &hostFS{sb: sb}, nil
}

// resolve maps the agent's path (ACP says absolute; a relative one is taken
// from root, as the file tools do) to the real path it may touch.
func (f *hostFS) resolve(p string) (string, error) {
	if p == "" {
		return "", hostError(jsonrpc.InvalidParams, "path is required")
	}
	abs, err := f.sb.Resolve(p)
	if err != nil {
		return "", hostError(jsonrpc.InvalidParams, "%v", err)
	}
	return abs, nil
}

// readTextFile serves fs/read_text_file: {sessionId, path, line?, limit?}
// -> {content}. line is 1-based and limit counts lines, each kept with its
// newline so windows concatenate back to the file.
func (f *hostFS) readTextFile(_ context.Context, params json.RawMessage) (any, error) {
	var r ReadTextFileRequest
	if err := decodeHostParams(params, &r); err != nil {
		return nil, err
	}
	if (r.Line != nil && *r.Line < 0) || (r.Limit != nil && *r.Limit < 0) {
		return nil, hostError(jsonrpc.InvalidParams, "line and limit must not be negative")
	}
	abs, err := f.resolve(r.Path)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, hostError(jsonrpc.ResourceNotFound, "file not found: %s", r.Path)
	case err == nil && fi.IsDir():
		return nil, hostError(jsonrpc.InvalidParams, "%s is a directory, not a file", r.Path)
	case err == nil && !fi.Mode().IsRegular():
		// A FIFO or device could block the read forever or never end.
		return nil, hostError(jsonrpc.InvalidParams, "%s is not a regular file", r.Path)
	}
	// Bounded whatever Stat said: the file may grow meanwhile.
	b, err := readAtMost(abs, hostMaxReadBytes+1)
	if err != nil {
		return nil, hostError(jsonrpc.Internal, "cannot read %s: %v", r.Path, err)
	}
	if len(b) > hostMaxReadBytes {
		return nil, hostError(jsonrpc.InvalidParams, "%s is too large (over %d bytes)", r.Path, hostMaxReadBytes)
	}
	if bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b) {
		return nil, hostError(jsonrpc.InvalidParams, "%s is not a text file (it contains NUL bytes or invalid UTF-8)", r.Path)
	}
	return ReadTextFileResponse{Content: lineWindow(string(b), r.Line, r.Limit)}, nil
}

func readAtMost(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, n))
}

// lineWindow returns limit lines of s from the 1-based line on, each with
// its newline. Line 0 is taken as 1 (the schema allows it); a window past
// the end is empty.
func lineWindow(s string, line, limit *int) string {
	lines := strings.SplitAfter(s, "\n")
	from := 0
	if line != nil && *line > 1 {
		from = min(*line-1, len(lines))
	}
	to := len(lines)
	if limit != nil {
		to = min(from+*limit, to)
	}
	return strings.Join(lines[from:to], "")
}

// writeTextFile serves fs/write_text_file: {sessionId, path, content} ->
// {}. The schema's result is an object; some Rust agents fail to parse a
// null result, so `{}` is sent rather than null.
func (f *hostFS) writeTextFile(_ context.Context, params json.RawMessage) (any, error) {
	var r WriteTextFileRequest
	if err := decodeHostParams(params, &r); err != nil {
		return nil, err
	}
	abs, err := f.resolve(r.Path)
	if err != nil {
		return nil, err
	}
	if abs == f.sb.Root {
		return nil, hostError(jsonrpc.InvalidParams, "%s is the work directory, not a file", r.Path)
	}
	if fi, err := os.Stat(abs); err == nil && !fi.Mode().IsRegular() {
		return nil, hostError(jsonrpc.InvalidParams, "%s is not a regular file", r.Path)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return nil, hostError(jsonrpc.Internal, "cannot create parent directories of %s: %v", r.Path, err)
	}
	if err := tools.WriteFileAtomic(abs, []byte(r.Content)); err != nil {
		return nil, hostError(jsonrpc.Internal, "cannot write %s: %v", r.Path, err)
	}
	return EmptyResponse{}, nil
}

// terminals runs the commands external agents start with terminal/*: each
// in its own process group, cwd confined to root, output captured up to a
// byte limit (older output dropped from the front at a UTF-8 character
// boundary), all of a session's terminals killed and released when its
// turn or session ends.
type terminals struct {
	sb    *tools.Sandbox
	sbErr error // root unusable: every create fails with it
	log   *slog.Logger

	mu     sync.Mutex
	byID   map[string]*hostTerminal
	seq    int
	closed bool
}

// hostTerminal is one command. status is written once, before done closes.
type hostTerminal struct {
	id, sessionID string
	cmd           *exec.Cmd
	out           *tailBuffer
	done          chan struct{}
	status        termExitStatus
}

// termExitStatus is ACP's TerminalExitStatus and WaitForTerminalExitResponse:
// exitCode for a normal exit, signal (e.g. "SIGKILL") when killed; the
// other is null.
type termExitStatus struct {
	ExitCode *int    `json:"exitCode"`
	Signal   *string `json:"signal"`
}

type termOutputResponse struct {
	Output     string          `json:"output"`
	Truncated  bool            `json:"truncated"`
	ExitStatus *termExitStatus `json:"exitStatus,omitempty"`
}

type termCreateRequest struct {
	SessionID       string      `json:"sessionId"`
	Command         string      `json:"command"`
	Args            []string    `json:"args"`
	Env             []nameValue `json:"env"`
	Cwd             *string     `json:"cwd"`
	OutputByteLimit *uint64     `json:"outputByteLimit"`
}

type termRef struct {
	SessionID  string `json:"sessionId"`
	TerminalID string `json:"terminalId"`
}

func newTerminals(root string, log *slog.Logger) *terminals {
	if log == nil {
		log = slog.Default()
	}
	sb, err := tools.NewSandbox(root)
	return &terminals{sb: sb, sbErr: err, log: log, byID: map[string]*hostTerminal{}}
}

// create serves terminal/create. The command starts at once and outlives
// the request, so the request's context is deliberately not used.
func (t *terminals) create(_ context.Context, params json.RawMessage) (any, error) {
	var r termCreateRequest
	if err := decodeHostParams(params, &r); err != nil {
		return nil, err
	}
	if r.SessionID == "" {
		return nil, hostError(jsonrpc.InvalidParams, "sessionId is required")
	}
	if strings.TrimSpace(r.Command) == "" {
		return nil, hostError(jsonrpc.InvalidParams, "command is required")
	}
	if t.sbErr != nil {
		return nil, hostError(jsonrpc.Internal, "%v", t.sbErr)
	}
	dir := t.sb.Root
	if r.Cwd != nil && *r.Cwd != "" {
		d, err := t.sb.Resolve(*r.Cwd)
		if err != nil {
			return nil, hostError(jsonrpc.InvalidParams, "cwd: %v", err)
		}
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			return nil, hostError(jsonrpc.InvalidParams, "cwd %s is not a directory", *r.Cwd)
		}
		dir = d
	}
	env := os.Environ()
	for _, v := range r.Env {
		if v.Name == "" || strings.ContainsAny(v.Name, "=\x00") {
			return nil, hostError(jsonrpc.InvalidParams, "invalid environment variable name %q", v.Name)
		}
		env = append(env, v.Name+"="+v.Value) // exec keeps the last of duplicates
	}
	limit := uint64(defaultTermOutputLimit)
	if r.OutputByteLimit != nil {
		limit = min(*r.OutputByteLimit, maxTermOutputLimit)
	}

	name, args := termArgv(r.Command, r.Args, dir)
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = env
	out := &tailBuffer{limit: int(limit)}
	// One writer for both streams: exec then shares a single pipe, so
	// stdout and stderr interleave in the order the command wrote them.
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = termWaitDelay
	setTermProcessGroup(cmd)

	// Start under the lock so closeAll or the limit never miss a terminal
	// that is half registered; starting a process takes about a millisecond.
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, hostError(jsonrpc.Internal, "the host is shutting down")
	}
	if len(t.byID) >= maxLiveTerminals {
		return nil, hostError(jsonrpc.Internal, "too many terminals (%d live); release some first", len(t.byID))
	}
	if err := cmd.Start(); err != nil {
		return nil, hostError(jsonrpc.Internal, "cannot start %s: %v", r.Command, err)
	}
	t.seq++
	term := &hostTerminal{id: fmt.Sprintf("term_%d", t.seq), sessionID: r.SessionID, cmd: cmd, out: out, done: make(chan struct{})}
	t.byID[term.id] = term
	t.log.Debug("acp host: terminal started", "terminal", term.id, "session", r.SessionID, "command", r.Command, "pid", cmd.Process.Pid)
	// Reap in every case, released or not, so no zombie is left behind.
	go func() {
		err := cmd.Wait()
		term.status = termStatus(cmd.ProcessState)
		close(term.done)
		t.log.Debug("acp host: terminal exited", "terminal", term.id, "err", err)
	}()
	return struct {
		TerminalID string `json:"terminalId"`
	}{term.id}, nil
}

// termShellMeta are characters no sane executable name contains but shell
// lines often do.
const termShellMeta = " \t\n|&;<>()$`\\\"'*?[]#~={}%!"

// termArgv runs the command directly, except for an argument-less command
// that reads like a shell line and names no executable file: claude-agent-acp
// and other agents send their Bash tool's whole line as "command" and rely
// on the client's shell (Zed runs every terminal through one). exec would
// only fail on such a command, so this changes no command that would run.
func termArgv(command string, args []string, dir string) (string, []string) {
	if len(args) > 0 || !strings.ContainsAny(command, termShellMeta) {
		return command, args
	}
	if strings.Contains(command, "/") {
		p := command
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return command, nil
		}
	}
	return "/bin/sh", []string{"-c", command}
}

// lookup finds the terminal a request names. Another session's terminal is
// reported as unknown, exactly like a released one.
func (t *terminals) lookup(params json.RawMessage) (*hostTerminal, error) {
	var r termRef
	if err := decodeHostParams(params, &r); err != nil {
		return nil, err
	}
	t.mu.Lock()
	term := t.byID[r.TerminalID]
	t.mu.Unlock()
	if term == nil || term.sessionID != r.SessionID {
		return nil, hostError(jsonrpc.InvalidParams, "unknown terminal %q", r.TerminalID)
	}
	return term, nil
}

// output serves terminal/output; exitStatus is omitted while running.
func (t *terminals) output(_ context.Context, params json.RawMessage) (any, error) {
	term, err := t.lookup(params)
	if err != nil {
		return nil, err
	}
	var st *termExitStatus
	select {
	case <-term.done:
		st = &term.status
	default:
	}
	// Checked before the snapshot: once exited, the output is complete and
	// a trailing partial character is the command's own.
	text, truncated := term.out.snapshot(st != nil)
	return termOutputResponse{Output: text, Truncated: truncated, ExitStatus: st}, nil
}

// waitForExit serves terminal/wait_for_exit, blocking until the command
// ends or the request is cancelled.
func (t *terminals) waitForExit(ctx context.Context, params json.RawMessage) (any, error) {
	term, err := t.lookup(params)
	if err != nil {
		return nil, err
	}
	select {
	case <-term.done:
		return term.status, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// kill serves terminal/kill: the process group dies, the terminal stays so
// its output and exit status can still be read.
func (t *terminals) kill(_ context.Context, params json.RawMessage) (any, error) {
	term, err := t.lookup(params)
	if err != nil {
		return nil, err
	}
	term.killGroup()
	return EmptyResponse{}, nil
}

// release serves terminal/release: kill if running, then forget.
func (t *terminals) release(_ context.Context, params json.RawMessage) (any, error) {
	term, err := t.lookup(params)
	if err != nil {
		return nil, err
	}
	t.drop(func(x *hostTerminal) bool { return x == term })
	return EmptyResponse{}, nil
}

// releaseSession kills and releases every terminal of a session whose turn
// or session ended: agents cancelled mid-command often never release.
func (t *terminals) releaseSession(sessionID string) {
	t.drop(func(x *hostTerminal) bool { return x.sessionID == sessionID })
}

// closeAll kills and releases every terminal and refuses new ones, for host
// shutdown.
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

// killGroup kills the whole group even after the command itself exited:
// children it left in the background hold the group (so its id cannot be
// reused) and must not outlive the terminal.
func (term *hostTerminal) killGroup() {
	if err := syscall.Kill(-term.cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		select {
		case <-term.done:
		default:
			term.cmd.Process.Kill()
		}
	}
}

func setTermProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

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

// tailBuffer keeps the last limit bytes written. It lets the buffer run up
// to half a limit over before compacting, so dropping from the front costs
// amortized O(1) per byte instead of a full copy on every write.
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
		p = p[len(p)-b.limit:]
		b.dropped = true
	}
	b.buf = append(b.buf, p...)
	if len(b.buf) > b.limit+max(b.limit/2, 4096) {
		b.buf = append(b.buf[:0], b.buf[len(b.buf)-b.limit:]...)
		b.dropped = true
	}
	return n, nil
}

// snapshot returns the retained output and whether any was dropped. After
// a cut the text starts at the next character; while the command runs, a
// character still half written is held back for the next call.
func (b *tailBuffer) snapshot(final bool) (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	view, truncated := b.buf, b.dropped
	if len(view) > b.limit {
		view, truncated = view[len(view)-b.limit:], true
	}
	if truncated {
		for i := 0; i < utf8.UTFMax-1 && len(view) > 0 && !utf8.RuneStart(view[0]); i++ {
			view = view[1:]
		}
	}
	if !final {
		view = trimIncompleteRune(view)
	}
	return string(view), truncated
}

// trimIncompleteRune drops an unfinished UTF-8 sequence at the end of b.
func trimIncompleteRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}
