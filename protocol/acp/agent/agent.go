// Package agent is openheim's ACP agent side: the handler of one client
// connection, the same for stdio (`openheim acp`), /ws envelopes and the
// bare /acp WebSocket. Running turns are shared through runtime/live's hub.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/protocol/jsonrpc"
	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/history"
	"github.com/openheim/openheim/runtime/live"
	"github.com/openheim/openheim/runtime/mcp"
	"github.com/openheim/openheim/runtime/session"
)

// Agent is openheim's ACP agent for one connection. It is independent of
// the transport: stdio, a /ws envelope or a bare WebSocket hand it a
// jsonrpc.Stream, and every connection shares the one Engine.
type Agent struct {
	Engine *engine.Engine
	// Runner runs the turns; nil: Engine.
	Runner engine.Runner
	// External, when set, serves sessions bound to an external ACP agent
	// (session/new _meta.agent): their modes and options (external.go).
	External ExternalAgents
	Catalog  *history.Catalog // session/list through the index; nil reads the store
	Version  string
	// Hub is shared by the connections of one server so they see each
	// other's turns; nil gives the connection its own, whose turns end
	// with it (stdio).
	Hub *live.Hub
	// Policy, when set, bounds the cwd and mcpServers clients may ask for
	// (the server's transports); nil trusts the client (stdio).
	Policy *SessionPolicy

	hub  *live.Hub
	peer *jsonrpc.Peer

	mu          sync.Mutex
	initialized bool
	inline      bool // seed-000 client: string protocolVersion, inline updates
	fs          acp.FileSystemCapability
	sessions    map[string]*liveSession
}

// liveSession is a session this connection created, loaded or resumed.
type liveSession struct {
	id, cwd         string
	provider, model string
	agent           string // the external ACP agent that runs it, if any

	mu     sync.Mutex // guards mode, provider, model, titled and mcp
	mode   string
	titled bool         // the title was announced (or existed before)
	mcp    *mcp.Manager // the session's own MCP servers (session/new mcpServers), if any
}

// setMCP gives the session its own MCP servers, closing earlier ones.
func (ls *liveSession) setMCP(m *mcp.Manager) {
	ls.mu.Lock()
	old := ls.mcp
	ls.mcp = m
	ls.mu.Unlock()
	if old != nil && old != m {
		old.Close()
	}
}

// Serve runs the protocol on s until the client goes away or ctx ends.
// Without a shared Hub, every running turn has then been cancelled and has
// finished, so its session is saved and its tool processes are gone; with
// one, turns go on and later connections can load their sessions.
func (a *Agent) Serve(ctx context.Context, s jsonrpc.Stream) error {
	a.sessions = map[string]*liveSession{}
	a.hub = a.Hub
	if a.hub == nil {
		a.hub = live.NewHub(ctx, a.Engine)
		defer a.hub.Stop()
	}
	a.peer = jsonrpc.NewPeer(s, a, jsonrpc.WithInOrder(func(m string) bool { return m == acp.MethodInitialize }),
		jsonrpc.WithRedactor(a.Engine.Redactor()))
	err := a.peer.Run(ctx)
	a.mu.Lock()
	live := a.sessions
	a.sessions = map[string]*liveSession{}
	a.mu.Unlock()
	for id, ls := range live {
		a.hub.Unsubscribe(id, a)
		ls.setMCP(nil)
	}
	return err
}

// Request implements jsonrpc.Handler.
func (a *Agent) Request(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if method == acp.MethodInitialize {
		return a.initialize(params)
	}
	a.mu.Lock()
	ok := a.initialized
	a.mu.Unlock()
	if !ok {
		return nil, jsonrpc.NewError(jsonrpc.InvalidRequest, "initialize first")
	}
	switch method {
	case acp.MethodSessionNew:
		return handle(params, a.newSession)
	case acp.MethodSessionLoad:
		return handle(params, a.load)
	case acp.MethodSessionResume:
		return handle(params, a.resume)
	case acp.MethodSessionList:
		return handle(params, a.list)
	case acp.MethodSessionClose:
		return handle(params, a.closeSession)
	case acp.MethodSessionDelete:
		return handle(params, a.deleteSession)
	case acp.MethodSessionPrompt:
		return handle(params, func(r acp.PromptRequest) (any, error) { return a.prompt(ctx, r) })
	case acp.MethodSessionSetMode:
		return handle(params, a.setMode)
	case acp.MethodSessionSetConfigOption:
		return handle(params, a.setConfigOption)
	}
	return nil, jsonrpc.NewError(jsonrpc.MethodNotFound, method)
}

// Notification implements jsonrpc.Handler; unknown notifications are
// ignored, as JSON-RPC asks.
func (a *Agent) Notification(_ context.Context, method string, params json.RawMessage) {
	if method != acp.MethodSessionCancel {
		return
	}
	var n acp.CancelNotification
	if json.Unmarshal(params, &n) != nil {
		return
	}
	a.mu.Lock()
	ls := a.sessions[n.SessionID]
	a.mu.Unlock()
	if ls != nil {
		a.hub.Cancel(ls.id)
	}
}

// handle decodes params into T (-32602 when they do not fit) and calls f.
func handle[T any](params json.RawMessage, f func(T) (any, error)) (any, error) {
	var req T
	if len(params) > 0 {
		if err := json.Unmarshal(params, &req); err != nil {
			return nil, invalidParams(err.Error())
		}
	}
	return f(req)
}

func invalidParams(why string) *jsonrpc.Error {
	return jsonrpc.NewError(jsonrpc.InvalidParams, "Invalid argument: "+why)
}

func notFound(id string) *jsonrpc.Error {
	return jsonrpc.NewError(jsonrpc.ResourceNotFound, "session not found: "+id)
}

// rpcError maps runtime errors to the codes of DESIGN.md §3.
func rpcError(id string, err error) error {
	var busy *session.BusyError
	var locked *session.LockedError
	var usage *engine.UsageError
	switch {
	case errors.As(err, &busy):
		data := map[string]any{"kind": "session_busy", "session_id": id}
		if busy.Holder != "" {
			data["replica"] = busy.Holder // the cluster replica running the turn
		}
		return &jsonrpc.Error{Code: jsonrpc.Internal, Message: jsonrpc.Message(jsonrpc.Internal), Data: data}
	case errors.As(err, &locked):
		return &jsonrpc.Error{Code: jsonrpc.Internal, Message: jsonrpc.Message(jsonrpc.Internal),
			Data: map[string]any{"kind": "session_locked", "session_id": id, "pid": locked.PID, "host": locked.Host}}
	case errors.Is(err, session.ErrInvalidID):
		return invalidParams("invalid session id format")
	case errors.Is(err, session.ErrNotFound):
		return notFound(id)
	case errors.As(err, &usage):
		return invalidParams(usage.Error())
	}
	return jsonrpc.NewError(jsonrpc.Internal, err.Error())
}

func (a *Agent) initialize(params json.RawMessage) (any, error) {
	var req acp.InitializeRequest
	if err := json.Unmarshal(params, &req); err != nil {
		return nil, invalidParams(err.Error())
	}
	a.mu.Lock()
	a.initialized = true
	a.inline = req.StringVersion()
	a.fs = req.ClientCapabilities.FS
	a.mu.Unlock()
	cfg := a.Engine.Config
	// MCP servers still connecting: _meta lists their tools and status.
	a.Engine.WaitMCP(context.Background(), engine.ListWait)
	reg, err := a.Engine.Tools(cfg.WorkDir, nil, false)
	if err != nil {
		return nil, jsonrpc.NewError(jsonrpc.Internal, err.Error())
	}
	on := &acp.Capability{}
	return acp.InitializeResponse{
		ProtocolVersion: req.ResponseVersion(),
		AgentCapabilities: acp.AgentCapabilities{
			LoadSession:         true,
			PromptCapabilities:  acp.PromptCapabilities{Image: true, EmbeddedContext: true},
			MCPCapabilities:     acp.MCPCapabilities{HTTP: true},
			SessionCapabilities: acp.SessionCapabilities{List: on, Resume: on, Close: on, Delete: on},
		},
		AgentInfo: &acp.Implementation{Name: "openheim", Title: "openheim", Version: a.Version},
		Meta: map[string]any{
			"models":      cfg.Models(),
			"mcp_servers": a.mcpStatus(),
			"skills":      a.skills(),
			"tools":       acp.ToolObjects(reg.Specs()),
			// The external agents session/new's _meta.agent may name.
			"acp_agents": a.externalAgents(),
		},
	}, nil
}

func (a *Agent) live(id string) (*liveSession, error) {
	if err := session.ValidateID(id); err != nil {
		return nil, invalidParams("invalid session id format")
	}
	a.mu.Lock()
	ls := a.sessions[id]
	a.mu.Unlock()
	if ls != nil {
		return ls, nil
	}
	// A client may prompt a session it knows from session/list without
	// loading it first; attach it without a replay.
	meta, err := a.Engine.Store.LoadMeta(id)
	if err != nil {
		return nil, rpcError(id, err)
	}
	return a.attach(*meta), nil
}

func (a *Agent) attach(m session.Meta) *liveSession {
	ls := &liveSession{id: m.ID, cwd: deref(m.Cwd), provider: deref(m.Provider), model: deref(m.Model),
		mode: ModeCode, titled: m.Title != nil}
	if m.ACP != nil {
		ls.agent = m.ACP.Agent
	}
	if ls.cwd == "" {
		ls.cwd = a.Engine.Config.WorkDir
	}
	a.mu.Lock()
	if old := a.sessions[m.ID]; old != nil {
		a.mu.Unlock()
		return old
	}
	a.sessions[m.ID] = ls
	a.mu.Unlock()
	a.hub.Subscribe(m.ID, a)
	return ls
}

// runner is what runs this connection's turns.
func (a *Agent) runner() engine.Runner {
	if a.Runner != nil {
		return a.Runner
	}
	return a.Engine
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// skills lists the skills a session can activate (_meta.skills).
func (a *Agent) skills() []string {
	names, err := a.Engine.Skills()
	if err != nil {
		slog.Warn("acp: listing skills", "err", err)
		return []string{}
	}
	return names
}
