// Package host is the host side of ACP (seed 002): openheim starts an
// external ACP agent (Claude Code through claude-agent-acp, Codex through
// codex-acp, OpenCode, Gemini CLI, or openheim itself) over stdio, drives
// its sessions, and answers its requests for permission, files and
// terminals.
//
// Runner puts that behind engine.Runner, so a turn on an external agent
// takes the engine's request and gives the engine's event stream.
package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/protocol/jsonrpc"
	"github.com/openheim/openheim/runtime/childproc"
	"github.com/openheim/openheim/runtime/redact"
)

// AgentSpec is how to start an external agent: [acp_agents.<name>].
// ExtraArgs come after Args (seed 002's Agent).
type AgentSpec struct {
	Name      string
	Command   string
	Args      []string
	ExtraArgs []string
	Env       map[string]string
	Cwd       string
	// Kind is the agent's kind (config.AgentKind*): its login command in
	// errors.
	Kind string
}

// Options configure a Host.
type Options struct {
	ClientInfo acp.Implementation
	// WorkDir confines the agent's fs/* requests and terminals.
	WorkDir string
	// AllowShell offers terminals (clientCapabilities.terminal); without it
	// terminal/create is refused. With it, each terminal/create still
	// passes Permission as an execute request (gate.go).
	AllowShell bool
	// Projection is openheim's rules set into the agent's own settings
	// (Project): appended arguments, merged session _meta.
	Projection Projection
	// Permission answers session/request_permission; nil cancels every
	// request (the agent then refuses the tool call).
	Permission func(ctx context.Context, r acp.RequestPermissionRequest) acp.RequestPermissionResponse
	Log        *slog.Logger
	Hooks      Hooks
	Limits     ReadModelLimits
	// CaptureContent is how much of a message that did not decode its
	// ProtocolError keeps: CaptureNone, CaptureMetadata ("", the default)
	// or CaptureFull. Redact masks secrets in what is kept and logged.
	CaptureContent string
	Redact         *redact.Redactor
	// Grace is how long Close waits for the agent to exit after its stdin
	// closes, then after SIGTERM, before SIGKILL (default 2 s each).
	Grace time.Duration
	// Transport, when set, replaces starting Command (tests: an in-process
	// agent over pipes).
	Transport *Transport
	// Environ, when set, replaces the environment the agent inherits
	// (tests run real agents without the user's credentials).
	Environ []string
}

// Transport is an already running agent's stdio.
type Transport struct {
	Stdin  io.WriteCloser
	Stdout io.Reader
}

// stderrTail is how many of the agent's last stderr lines an error quotes.
const stderrTail = 5

// codeAuthRequired is ACP's "authentication required".
const codeAuthRequired = -32000

// Info is what the agent said about itself in initialize.
type Info struct {
	ProtocolVersion json.RawMessage     `json:"protocolVersion"`
	AgentInfo       *acp.Implementation `json:"agentInfo,omitempty"`
	Capabilities    json.RawMessage     `json:"agentCapabilities"`
	AuthMethods     []json.RawMessage   `json:"authMethods"`
	caps            hostCaps
}

// hostCaps are the capabilities the host checks before each call.
type hostCaps struct {
	LoadSession         bool `json:"loadSession"`
	SessionCapabilities struct {
		List, Resume, Close, Delete, Fork, AdditionalDirectories json.RawMessage
	} `json:"sessionCapabilities"`
	PromptCapabilities acp.PromptCapabilities `json:"promptCapabilities"`
}

func present(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null" && string(raw) != "false"
}

// Host is one running external agent.
type Host struct {
	spec  AgentSpec
	opts  Options
	log   *slog.Logger
	cmd   *exec.Cmd
	stdin io.WriteCloser
	peer  *jsonrpc.Peer
	info  Info
	fs    *hostFS
	terms *terminals
	stats hostStats
	// warned counts the protocol errors logged as warnings (protoerr.go).
	warned atomic.Int64

	mu       sync.Mutex
	sessions map[string]*hostSession
	closed   bool
	tail     []string      // the agent's last stderr lines, for errors
	exited   chan struct{} // closed when the process (or transport) ended
	// authTried: an env_var method was tried (auth.go), once per host.
	authTried bool
	filesDir  string // the projection's files (files.go), removed at exit
}

// Start starts the agent and initializes it.
func Start(ctx context.Context, spec AgentSpec, opts Options) (*Host, error) {
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	if opts.Grace <= 0 {
		opts.Grace = 2 * time.Second
	}
	if err := checkCapture(opts.CaptureContent); err != nil {
		return nil, err
	}
	h := &Host{spec: spec, opts: opts, log: opts.Log.With("acp_agent", spec.Name), sessions: map[string]*hostSession{},
		exited: make(chan struct{})}
	var err error
	if h.fs, err = newHostFS(opts.WorkDir); err != nil {
		return nil, err
	}
	h.terms = newTerminals(opts.WorkDir, h.log)
	var stdout io.Reader
	if opts.Transport != nil {
		h.stdin, stdout = opts.Transport.Stdin, opts.Transport.Stdout
	} else if h.stdin, stdout, err = h.spawn(); err != nil {
		return nil, err
	}
	h.peer = jsonrpc.NewPeer(jsonrpc.NewLineStream(stdout, h.stdin, h.stdin), h, jsonrpc.WithLogger(h.log),
		jsonrpc.WithInvalid(func(raw json.RawMessage, err error) { h.protocolError("message", "", raw, err) }))
	go func() {
		err := h.peer.Run(context.Background())
		if err != nil {
			h.log.Debug("acp host: connection ended", "err", err)
		}
		if opts.Transport != nil {
			close(h.exited)
		}
	}()
	if err := h.initialize(ctx); err != nil {
		h.Close()
		return nil, err
	}
	return h, nil
}

// spawn starts the agent in a process group of its own, its stderr going
// to the log.
func (h *Host) spawn() (io.WriteCloser, io.Reader, error) {
	if h.spec.Command == "" {
		return nil, nil, fmt.Errorf("acp agent %s: no command", h.spec.Name)
	}
	proj, err := h.materialize(h.opts.Projection.Args)
	if err != nil {
		return nil, nil, fmt.Errorf("acp agent %s: %w", h.spec.Name, err)
	}
	args := append(append(append([]string{}, h.spec.Args...), h.spec.ExtraArgs...), proj...)
	cmd := exec.Command(h.spec.Command, args...)
	cmd.Dir = h.spec.Cwd
	if cmd.Dir == "" {
		cmd.Dir = h.opts.WorkDir
	}
	cmd.Env = os.Environ()
	if h.opts.Environ != nil {
		cmd.Env = append([]string{}, h.opts.Environ...)
	}
	for k, v := range h.spec.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	for k, v := range h.opts.Projection.Env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	// exec copies stderr itself, so Wait returns only once every line is
	// in (and WaitDelay bounds that when a grandchild keeps the pipe).
	cmd.Stderr = &stderrLines{h: h}
	cmd.WaitDelay = 2 * time.Second
	// In a process group of its own that dies with openheim.
	if err := childproc.Start(cmd); err != nil {
		h.removeFiles()
		h.hook(ProcessEvent{Type: "spawn", Command: h.spec.Command, Err: err})
		return nil, nil, fmt.Errorf("acp agent %s: starting %s: %w", h.spec.Name, h.spec.Command, err)
	}
	h.cmd = cmd
	h.hook(ProcessEvent{Type: "spawn", Command: h.spec.Command})
	for _, n := range h.opts.Projection.Notes {
		h.log.Warn("acp agent " + h.spec.Name + ": " + n)
	}
	go func() {
		err := cmd.Wait()
		h.removeFiles()
		childproc.Exited(cmd.Process.Pid)
		h.log.Debug("acp agent exited", "err", err)
		close(h.exited)
	}()
	return stdin, stdout, nil
}

// stderrLines logs the agent's stderr line by line and keeps the last few
// for error messages.
type stderrLines struct {
	h       *Host
	partial []byte
}

func (w *stderrLines) Write(p []byte) (int, error) {
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		line := string(bytes.TrimRight(w.partial[:i], "\r"))
		w.partial = w.partial[i+1:]
		w.h.log.Debug("acp agent stderr", "line", line)
		w.h.mu.Lock()
		w.h.tail = append(w.h.tail, line)
		if len(w.h.tail) > stderrTail {
			w.h.tail = w.h.tail[1:]
		}
		w.h.mu.Unlock()
	}
	if len(w.partial) > 64<<10 { // a line that never ends
		w.partial = w.partial[:0]
	}
	return len(p), nil
}

// initialize performs the handshake.
func (h *Host) initialize(ctx context.Context) error {
	req := struct {
		ProtocolVersion    int                    `json:"protocolVersion"`
		ClientCapabilities acp.ClientCapabilities `json:"clientCapabilities"`
		ClientInfo         acp.Implementation     `json:"clientInfo"`
	}{acp.ProtocolVersion, acp.ClientCapabilities{FS: acp.FileSystemCapability{ReadTextFile: true, WriteTextFile: true}, Terminal: h.opts.AllowShell}, h.opts.ClientInfo}
	var raw json.RawMessage
	if err := h.call(ctx, acp.MethodInitialize, req, &raw); err != nil {
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) && h.cmd != nil {
			// A transport error (closed pipe, broken write): the agent is
			// probably exiting; wait for that to quote its stderr.
			select {
			case <-h.exited:
			case <-time.After(time.Second):
			}
		}
		select {
		case <-h.exited:
			h.mu.Lock()
			tail := strings.Join(h.tail, " | ")
			h.mu.Unlock()
			if tail != "" {
				return fmt.Errorf("acp agent %s exited during initialize; its stderr: %s", h.spec.Name, tail)
			}
			return fmt.Errorf("acp agent %s exited during initialize", h.spec.Name)
		default:
		}
		return fmt.Errorf("acp agent %s: initialize: %w", h.spec.Name, err)
	}
	var resp Info
	if err := acp.DecodeLenient(raw, &resp); err != nil {
		h.protocolError(acp.MethodInitialize, "", raw, err)
		if !acp.Partial(err) {
			return fmt.Errorf("acp agent %s: initialize: %w", h.spec.Name, err)
		}
	}
	if len(resp.Capabilities) > 0 {
		if err := acp.DecodeLenient(resp.Capabilities, &resp.caps); err != nil {
			h.protocolError(acp.MethodInitialize, "", resp.Capabilities, err)
		}
	}
	var v int
	if json.Unmarshal(resp.ProtocolVersion, &v) == nil && v != acp.ProtocolVersion {
		return fmt.Errorf("acp agent %s speaks ACP version %d; openheim speaks %d", h.spec.Name, v, acp.ProtocolVersion)
	}
	h.info = resp
	return nil
}

// Info is the agent's initialize answer.
func (h *Host) Info() Info { return h.info }

// call sends a request. An agent's -32000 is answered once by
// authenticating with an env_var method the agent's environment satisfies
// (auth.go), then the call is retried; otherwise it becomes an
// AuthRequiredError saying how to log in.
func (h *Host) call(ctx context.Context, method string, params, result any) error {
	err := h.peer.Call(ctx, method, params, result)
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != codeAuthRequired {
		return err
	}
	if h.authenticateFromEnv(ctx) {
		if err = h.peer.Call(ctx, method, params, result); !errors.As(err, &rpc) || rpc.Code != codeAuthRequired {
			return err
		}
	}
	return &AuthRequiredError{Agent: h.spec.Name, Message: rpc.Message, Methods: h.info.AuthMethods, Login: h.loginHint()}
}

// eofWait is how long Close gives an agent to exit on its own once its
// stdin is closed, before SIGTERM: openheim's own agent exits at once,
// claude-agent-acp and codex-acp never do, so waiting the whole grace
// period would only make every exit slower.
const eofWait = 250 * time.Millisecond

// Close ends the agent: every session's terminals released, stdin closed,
// SIGTERM to its process group if it is still running eofWait later, and
// SIGKILL Grace after that.
func (h *Host) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		<-h.exited
		return nil
	}
	h.closed = true
	h.mu.Unlock()
	h.terms.closeAll()
	h.stdin.Close()
	if h.cmd == nil {
		return nil
	}
	for _, step := range []struct {
		wait time.Duration
		sig  syscall.Signal
	}{{min(eofWait, h.opts.Grace), syscall.SIGTERM}, {h.opts.Grace, syscall.SIGKILL}} {
		select {
		case <-h.exited:
			reapGroup(h.cmd, h.opts.Grace)
			h.hook(ProcessEvent{Type: "teardown", Command: h.spec.Command})
			return nil
		case <-time.After(step.wait):
		}
		if step.sig == syscall.SIGKILL {
			break
		}
		hostSignalGroup(h.cmd, step.sig)
	}
	h.Kill()
	return nil
}

// Kill ends the agent's process group at once (a turn that outlived its
// timeout and ignored session/cancel).
func (h *Host) Kill() {
	if h.cmd == nil {
		h.stdin.Close()
		return
	}
	hostSignalGroup(h.cmd, syscall.SIGKILL)
	select {
	case <-h.exited:
	case <-time.After(5 * time.Second):
		h.hook(ProcessEvent{Type: "wait_timeout", Command: h.spec.Command})
	}
	h.hook(ProcessEvent{Type: "force_kill", Command: h.spec.Command})
}

// Exited is closed once the agent's process has ended.
func (h *Host) Exited() <-chan struct{} { return h.exited }

// Request implements jsonrpc.Handler: the agent's requests to its client.
func (h *Host) Request(ctx context.Context, method string, params json.RawMessage) (any, error) {
	h.log.Debug("acp host: agent request", "method", method)
	switch method {
	case acp.MethodRequestPermission:
		return h.permission(ctx, params)
	case acp.MethodReadTextFile:
		if err := h.gateFS(ctx, acp.MethodReadTextFile, "read", params); err != nil {
			return nil, err
		}
		return h.fs.readTextFile(ctx, params)
	case acp.MethodWriteTextFile:
		if err := h.gateFS(ctx, acp.MethodWriteTextFile, "edit", params); err != nil {
			return nil, err
		}
		return h.fs.writeTextFile(ctx, params)
	case "terminal/create":
		if err := h.gateTerminal(ctx, params); err != nil {
			return nil, err
		}
		return h.terms.create(ctx, params)
	case "terminal/output":
		return h.terms.output(ctx, params)
	case "terminal/wait_for_exit":
		return h.terms.waitForExit(ctx, params)
	case "terminal/kill":
		return h.terms.kill(ctx, params)
	case "terminal/release":
		return h.terms.release(ctx, params)
	}
	return nil, jsonrpc.NewError(jsonrpc.MethodNotFound, method)
}

// Notification implements jsonrpc.Handler: session/update, routed to its
// session; anything else is ignored (agents add their own).
func (h *Host) Notification(_ context.Context, method string, params json.RawMessage) {
	if method != acp.MethodSessionUpdate {
		h.log.Debug("acp host: ignoring a notification", "method", method)
		return
	}
	var n struct {
		SessionID string          `json:"sessionId"`
		Update    json.RawMessage `json:"update"`
	}
	if err := json.Unmarshal(params, &n); err != nil {
		h.protocolError(method, "", params, err)
		return
	}
	if s := h.session(n.SessionID); s != nil {
		s.state.observe(n.Update) // modes, options, commands (state.go)
		s.update(n.Update)
	} else {
		h.log.Debug("acp host: an update for a session not open here", "session", n.SessionID)
	}
}

// permission asks openheim's permission handler about the agent's call.
func (h *Host) permission(ctx context.Context, params json.RawMessage) (any, error) {
	var r acp.RequestPermissionRequest
	if err := acp.DecodeLenient(params, &r); err != nil {
		h.protocolError(acp.MethodRequestPermission, r.SessionID, params, err)
		if !acp.Partial(err) || r.SessionID == "" || r.ToolCall.ToolCallID == "" {
			return nil, jsonrpc.NewError(jsonrpc.InvalidParams, err.Error())
		}
	}
	h.announce(r)
	return h.decide(ctx, r), nil
}

// decide answers a permission request (the agent's, or one the host asks
// itself before a terminal) and records it in the session's read model.
// A request still open when the turn is cancelled is answered cancelled,
// as ACP wants (the agent cannot end its turn before).
func (h *Host) decide(ctx context.Context, r acp.RequestPermissionRequest) acp.RequestPermissionResponse {
	s := h.session(r.SessionID)
	if s != nil {
		var stop context.CancelFunc
		ctx, stop = s.askContext(ctx)
		defer stop()
	}
	cancelled := acp.RequestPermissionResponse{Outcome: acp.PermissionOutcome{Outcome: acp.OutcomeCancelled}}
	resp := cancelled
	if h.opts.Permission != nil && ctx.Err() == nil {
		resp = h.opts.Permission(ctx, r)
	}
	if ctx.Err() != nil {
		resp = cancelled
	}
	if s != nil {
		s.recordPermission(r, resp)
		if granted(resp, r.Options) {
			s.allow(reachOf(r.ToolCall, h.opts.WorkDir).Paths)
		}
	}
	return resp
}
