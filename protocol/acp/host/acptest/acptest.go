// Package acptest provides test peers for openheim's ACP host: a scripted
// fake ACP agent (Serve in-process, or a real child process through
// MaybeRunFakeAgent and Command) and the npm-installed real agents
// (NPMAgent; see PEERS.md for how those behave).
//
// The package deliberately does not import package host: host's tests are
// internal (package host), and an internal test importing a package that
// imports host is an import cycle. Nor does it take its wire shapes from
// package acp: they are written from the ACP v1 schema, so the fake checks
// the host against the schema rather than against the host's own types.
//
// In-process use:
//
//	hostR, agentW := io.Pipe()
//	agentR, hostW := io.Pipe()
//	rec := &acptest.Recorder{}
//	go acptest.Serve(ctx, acptest.Script{HangPrompt: true, Recorder: rec}, agentR, agentW)
//	// drive the host over hostR/hostW; closing hostW is the host hanging up.
//
// Real-process use: see MaybeRunFakeAgent and Command.
package acptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/openheim/openheim/protocol/jsonrpc"
)

// Script says how the fake agent behaves. The zero value is a well-behaved
// agent: initialize answers protocolVersion 1, agentInfo {name:"fake-agent"},
// DefaultCapabilities and authMethods []; session/new creates "fake-1",
// "fake-2", ...; session/prompt streams Updates then answers
// {stopReason:"end_turn"}. Every field survives JSON (Command passes the
// script to the child that way) except Recorder and Log.
type Script struct {
	// Updates are the session/update "update" objects sent per prompt, in
	// order, one notification each (default: one agent_message_chunk
	// "hello from fake").
	Updates []json.RawMessage `json:",omitempty"`
	// UpdateDelay is slept before each update, so hosts can observe a
	// turn in progress (and cancel it).
	UpdateDelay time.Duration `json:",omitempty"`
	// LateUpdates are sent LateDelay after the prompt's updates, whose
	// answer follows at once: out of the turn when LateDelay lets the
	// answer go first (codex-acp sends a command's end so at times).
	LateUpdates []json.RawMessage `json:",omitempty"`
	LateDelay   time.Duration     `json:",omitempty"`
	// Garbage are raw lines written to stdout once, before the first
	// prompt's updates: malformed JSON, unknown methods, a response to an
	// unknown id, an unknown sessionUpdate kind... GarbageLines has a set.
	Garbage []string `json:",omitempty"`
	// AuthRequired makes session/new, load, resume, fork and prompt fail
	// with -32000 "Authentication required" (as codex-acp does without
	// credentials) until the host calls authenticate with one of the
	// methods initialize lists (FakeAuthMethods: one has an unknown type).
	AuthRequired bool `json:",omitempty"`
	// IgnoreEOF keeps the agent running after its input ends, like
	// claude-agent-acp and codex-acp: in-process Serve then returns only
	// when ctx is done; a process must be killed.
	IgnoreEOF bool `json:",omitempty"`
	// IgnoreSIGTERM (process mode only) ignores SIGTERM, so only SIGKILL
	// ends the process.
	IgnoreSIGTERM bool `json:",omitempty"`
	// HangPrompt makes session/prompt, after its updates, block until
	// session/cancel (or session/close) arrives, then answer "cancelled".
	HangPrompt bool `json:",omitempty"`
	// AskPermission, when set, makes each prompt first send
	// session/request_permission with these params (sessionId filled in)
	// and echo the outcome as an agent_message_chunk
	// "permission: <optionId or cancelled>". PermissionParams builds one.
	AskPermission *json.RawMessage `json:",omitempty"`
	// ReadFile, when set, makes each prompt call fs/read_text_file {path}
	// and echo "read: <content>".
	ReadFile string `json:",omitempty"`
	// WriteFile (path, content), when set, makes each prompt call
	// fs/write_text_file and echo "wrote: <path>".
	WriteFile *[2]string `json:",omitempty"`
	// Terminal (command and args), when set, makes each prompt run it
	// through terminal/create, wait_for_exit, output and release, and echo
	// "terminal: <output>|exit=<code>" ("exit=signal:<name>" when killed).
	Terminal []string `json:",omitempty"`
	// SessionModes, when set, is the "modes" ({currentModeId,
	// availableModes}) of session/new, load and resume answers.
	SessionModes json.RawMessage `json:",omitempty"`
	// Settings gives sessions modes, models, config options and commands
	// that session/set_mode, set_config_option and set_model change
	// (settings.go).
	Settings bool `json:",omitempty"`
	// Capabilities replaces agentCapabilities entirely when set.
	Capabilities map[string]any `json:",omitempty"`
	// StopReason answers prompts instead of "end_turn" (e.g. "refusal").
	StopReason string `json:",omitempty"`
	// PromptError, when set, makes each prompt fail with this error after
	// its updates (an agent whose model call failed).
	PromptError *jsonrpc.Error `json:",omitempty"`
	// CrashInPrompt ends the agent abruptly after a prompt's updates,
	// without answering: a process exits with status 3, Serve returns
	// ErrCrashed (closing r and w, so the host sees EOF).
	CrashInPrompt bool `json:",omitempty"`
	// InitDelay is slept before answering initialize (slow starters).
	InitDelay time.Duration `json:",omitempty"`
	// LoadReplay are session/update "update" objects replayed by
	// session/load before it answers (the default replays nothing).
	LoadReplay []json.RawMessage `json:",omitempty"`
	// LoadUnknown makes session/load, resume, fork, close and delete of an
	// id the agent never made work, as an agent that keeps sessions on
	// disk does for one an earlier process made (ids then carry the pid).
	LoadUnknown bool `json:",omitempty"`
	// Stderr are raw lines written to the log before serving (process
	// mode: noise a host must tolerate on the agent's stderr).
	Stderr []string `json:",omitempty"`

	// Recorder, when set, records every request and notification received.
	Recorder *Recorder `json:"-"`
	// Log, when set, gets one JSON line per received request or
	// notification: {"recv":method,"params":...} plus "notification":true
	// for notifications. Process mode logs to stderr.
	Log io.Writer `json:"-"`

	exit func(code int) // process mode: how CrashInPrompt ends the process
}

// ErrCrashed is returned by Serve when Script.CrashInPrompt ended it.
var ErrCrashed = errors.New("acptest: fake agent crashed on purpose")

// AgentName is the agentInfo name of the fake agent.
const AgentName = "fake-agent"

// DefaultCapabilities are the agentCapabilities of the zero Script.
// session/delete is listed too because the fake serves it.
func DefaultCapabilities() map[string]any {
	return map[string]any{
		"loadSession":        true,
		"promptCapabilities": map[string]any{"image": false, "audio": false, "embeddedContext": false},
		"mcpCapabilities":    map[string]any{"http": false, "sse": false},
		"sessionCapabilities": map[string]any{
			"list": map[string]any{}, "close": map[string]any{}, "resume": map[string]any{},
			"fork": map[string]any{}, "delete": map[string]any{},
		},
		"auth": map[string]any{"logout": map[string]any{}},
	}
}

// FakeAuthMethods are the authMethods initialize lists when AuthRequired:
// an untyped one (agent-handled), an env_var one, and one of a type no
// client knows, which hosts must tolerate.
func FakeAuthMethods() []map[string]any {
	return []map[string]any{
		{"id": "fake-login", "name": "Log in to fake", "description": "agent-handled login"},
		{"id": "fake-key", "name": "Use FAKE_API_KEY", "type": "env_var", "vars": []map[string]any{{"name": "FAKE_API_KEY"}}},
		{"id": "fake-future", "name": "Future auth", "type": "quantum_handshake"},
	}
}

// GarbageLines are lines a host must survive: malformed JSON, a non-object,
// a batch, an unknown notification, an unknown request (the host should
// answer Method not found), a response to an id never used, and a
// session/update of an unknown kind for an unknown session.
var GarbageLines = []string{
	`{"jsonrpc":"2.0","method":`,
	`42`,
	`[{"jsonrpc":"2.0","method":"x"}]`,
	`{"jsonrpc":"2.0","method":"fake/unknown_notification","params":{}}`,
	`{"jsonrpc":"2.0","id":"fake-req-1","method":"fake/unknown_request","params":{}}`,
	`{"jsonrpc":"2.0","id":987654,"result":{}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"fake-none","update":{"sessionUpdate":"fake_future_kind","x":1}}}`,
}

// Serve runs the fake agent over r and w until r ends (with IgnoreEOF:
// until ctx is done). On return it closes r and w when they are Closers, so
// an in-process host sees what it would see when a process exits. It
// returns nil on a clean end of input (or ctx's error).
func Serve(ctx context.Context, s Script, r io.Reader, w io.Writer) error {
	lw := &lockedWriter{w: w}
	defer closers{w}.Close()
	a := &agent{script: s, out: lw, sessions: map[string]*session{}}
	if s.Log != nil {
		for _, line := range s.Stderr {
			fmt.Fprintln(s.Log, line)
		}
	}
	// The stream closes only r: w stays open after EOF when IgnoreEOF,
	// as a real agent's stdout does.
	peer := jsonrpc.NewPeer(jsonrpc.NewLineStream(r, lw, closers{r}), a,
		jsonrpc.WithLogger(slog.New(slog.DiscardHandler)),
		// initialize must be done before pipelined requests are seen, so
		// that they are not refused as "before initialize". The hook also
		// counts prompts in read order (see agent.promptsRead).
		jsonrpc.WithInOrder(func(m string) bool {
			if m == "session/prompt" {
				a.mu.Lock()
				a.promptsRead++
				a.mu.Unlock()
			}
			return m == "initialize"
		}))
	a.rpc = peer
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	a.crash = func() {
		lw.kill()
		if s.exit != nil {
			s.exit(3)
		}
		stop()
	}
	err := peer.Run(runCtx)
	if lw.dead() {
		return ErrCrashed
	}
	if err == nil && s.IgnoreEOF {
		<-ctx.Done()
		return ctx.Err()
	}
	return err
}

type lockedWriter struct {
	mu      sync.Mutex
	w       io.Writer
	crashed bool
}

// errDead is what writes get after a crash: nothing more may reach the
// host, not even the answer of the handler that crashed.
var errDead = errors.New("acptest: agent crashed")

// Write is called once per line by the line stream and by garbage writes,
// so the mutex keeps garbage from splitting a message.
func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.crashed {
		return 0, errDead
	}
	return l.w.Write(b)
}

func (l *lockedWriter) kill() {
	l.mu.Lock()
	l.crashed = true
	l.mu.Unlock()
}

func (l *lockedWriter) dead() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.crashed
}

type closers []any

func (cs closers) Close() error {
	for _, c := range cs {
		if c, ok := c.(io.Closer); ok {
			c.Close()
		}
	}
	return nil
}

type agent struct {
	script Script
	rpc    *jsonrpc.Peer
	out    *lockedWriter
	crash  func()

	mu          sync.Mutex
	initialized bool
	authed      bool
	garbageDone bool
	nextID      int
	sessions    map[string]*session
	// A prompt's handler runs in its own goroutine, so a session/cancel
	// sent right behind it can be handled before the prompt registers its
	// turn. Prompts are counted when read and when they register a turn
	// (or fail before); a cancel that finds no turn while some prompt is
	// read but not registered is kept for that session
	// (session.earlyCancel) instead of lost.
	promptsRead, promptsStarted int
	order                       []string // session ids in creation order, for list
	loggedOut                   int      // logout calls
}

type session struct {
	id, cwd   string
	updatedAt time.Time
	turns     map[int]chan struct{} // running prompts, closed on cancel
	nextTurn  int
	// earlyCancel is promptsRead when a cancel came with no turn running
	// but prompts in flight: a prompt of this session that started at or
	// before that count was sent before the cancel.
	earlyCancel int
	settings    settings // Script.Settings
	announced   bool     // its commands were sent
}

func (a *agent) record(method string, params json.RawMessage, note bool) {
	if a.script.Recorder != nil {
		a.script.Recorder.add(Received{Method: method, Params: params, Notification: note})
	}
	if a.script.Log != nil {
		line := logLine{Recv: method, Params: params, Notification: note}
		if len(line.Params) == 0 {
			line.Params = nil
		}
		b, err := json.Marshal(line)
		if err != nil { // params were not valid JSON (the peer checks, but be safe)
			b, _ = json.Marshal(logLine{Recv: method, Notification: note})
		}
		a.script.Log.Write(append(b, '\n'))
	}
}

// Notification implements jsonrpc.Handler.
func (a *agent) Notification(_ context.Context, method string, params json.RawMessage) {
	a.record(method, params, true)
	if method != "session/cancel" {
		return
	}
	var p struct {
		SessionID string `json:"sessionId"`
	}
	if json.Unmarshal(params, &p) == nil {
		a.cancelTurns(p.SessionID)
	}
}

// Request implements jsonrpc.Handler.
func (a *agent) Request(ctx context.Context, method string, params json.RawMessage) (any, error) {
	a.record(method, params, false)
	if method == "initialize" {
		return a.initialize(params)
	}
	a.mu.Lock()
	ok := a.initialized
	a.mu.Unlock()
	if !ok {
		return nil, jsonrpc.NewError(jsonrpc.InvalidRequest, "initialize first")
	}
	switch method {
	case "authenticate":
		return a.authenticate(params)
	case "session/new":
		return a.newSession(params)
	case "session/load", "session/resume":
		return a.loadSession(ctx, method, params)
	case "session/fork":
		return a.forkSession(params)
	case "session/list":
		return a.listSessions(params)
	case "session/close", "session/delete":
		return a.closeSession(method, params)
	case "session/prompt":
		return a.prompt(ctx, params)
	case "session/set_mode", "session/set_config_option", "session/set_model":
		return a.setSetting(method, params)
	case "logout":
		return a.logout()
	}
	return nil, jsonrpc.NewError(jsonrpc.MethodNotFound, method)
}

func (a *agent) initialize(params json.RawMessage) (any, error) {
	var p struct {
		ProtocolVersion json.RawMessage `json:"protocolVersion"`
	}
	if err := json.Unmarshal(params, &p); err != nil || len(p.ProtocolVersion) == 0 {
		return nil, jsonrpc.NewError(jsonrpc.InvalidParams, "protocolVersion is required")
	}
	if d := a.script.InitDelay; d > 0 {
		time.Sleep(d)
	}
	a.mu.Lock()
	a.initialized = true
	a.mu.Unlock()
	caps := a.script.Capabilities
	if caps == nil {
		caps = DefaultCapabilities()
	}
	auth := []map[string]any{}
	if a.script.AuthRequired {
		auth = FakeAuthMethods()
	}
	return map[string]any{
		"protocolVersion":   1,
		"agentInfo":         map[string]any{"name": AgentName, "title": "Fake Agent", "version": "0.0.0"},
		"agentCapabilities": caps,
		"authMethods":       auth,
	}, nil
}

func (a *agent) authenticate(params json.RawMessage) (any, error) {
	var p struct {
		MethodID string `json:"methodId"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, jsonrpc.NewError(jsonrpc.InvalidParams, err.Error())
	}
	for _, m := range FakeAuthMethods() {
		if m["id"] == p.MethodID {
			a.mu.Lock()
			a.authed = true
			a.mu.Unlock()
			return map[string]any{}, nil
		}
	}
	return nil, jsonrpc.NewError(jsonrpc.InvalidParams, "unknown auth method "+p.MethodID)
}

// checkAuth is the -32000 error codex-acp gives without credentials (no
// data).
func (a *agent) checkAuth() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.script.AuthRequired && !a.authed {
		return jsonrpc.NewError(jsonrpc.AuthRequired, nil)
	}
	return nil
}

func (a *agent) writeRaw(lines []string) {
	for _, l := range lines {
		a.out.Write([]byte(strings.TrimRight(l, "\r\n") + "\n"))
	}
}

type logLine struct {
	Recv         string          `json:"recv"`
	Params       json.RawMessage `json:"params,omitempty"`
	Notification bool            `json:"notification,omitempty"`
}
