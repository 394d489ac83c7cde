package agent

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/protocol/jsonrpc"
	"github.com/openheim/openheim/runtime/session"
)

// Sessions an external ACP agent runs (Claude Code, Codex, ...), served to
// this connection's client like openheim's own: the turns go to the agent
// through the Runner (the server's dispatches them), the permission
// questions, history and live fan-out are openheim's, and the session's
// modes and options are the agent's, forwarded.

// ExternalAgents is what the server offers for sessions bound to an
// external agent (protocol/acp/host's Dispatch implements it; this package
// does not import the host side).
type ExternalAgents interface {
	// Describe opens session id on its agent (starting the agent's
	// session when it has none yet) and returns its modes and options.
	Describe(ctx context.Context, id string) (*acp.SessionModeState, []acp.SessionConfigOption, error)
	SetMode(ctx context.Context, id, mode string) error
	// SetConfigOption sets an option and returns every option after.
	SetConfigOption(ctx context.Context, id, configID string, value any) ([]acp.SessionConfigOption, error)
}

// externalTimeout bounds starting an agent and opening its session (npx
// may fetch the agent first).
const externalTimeout = 2 * time.Minute

// newAgentSession serves session/new with _meta.agent: an openheim session
// bound to that agent, whose session on the agent starts now so the
// answer carries the agent's modes and options. When that fails nothing
// is left behind.
func (a *Agent) newAgentSession(r acp.NewSessionRequest, name string) (any, error) {
	if a.External == nil {
		return nil, invalidParams("external ACP agents are not available on this connection")
	}
	if _, err := a.Engine.Config.ACPAgentNamed(name); err != nil {
		return nil, invalidParams(err.Error())
	}
	if r.CWD == "" {
		r.CWD = a.Engine.Config.WorkDir
	}
	if err := a.Policy.check(r.CWD, r.MCPServers); err != nil {
		return nil, err
	}
	if len(r.MCPServers) > 0 {
		return nil, invalidParams("a session of an external agent gets openheim's MCP servers; it takes none of its own")
	}
	if err := checkCwd(r.CWD, false); err != nil {
		return nil, err
	}
	meta := session.NewMeta(time.Now())
	meta.Cwd = session.Str(filepath.Clean(r.CWD))
	meta.Provider, meta.Model = session.Str("acp"), session.Str(name)
	meta.ACP = &session.ACPBinding{Agent: name, Cwd: filepath.Clean(r.CWD)}
	if err := a.Engine.Store.Create(meta); err != nil {
		return nil, rpcError("", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), externalTimeout)
	defer cancel()
	modes, opts, err := a.External.Describe(ctx, meta.ID)
	if err != nil {
		a.Engine.Store.Purge(meta.ID)
		return nil, jsonrpc.NewError(jsonrpc.Internal, "acp agent "+name+": "+err.Error())
	}
	a.attach(meta)
	return acp.NewSessionResponse{SessionID: meta.ID, Modes: modes, ConfigOptions: opts}, nil
}

// externalSettings are the modes and options of a bound session for a
// load or resume answer; an agent that cannot be reached leaves them out
// (the history is openheim's and loads anyway).
func (a *Agent) externalSettings(ls *liveSession) (*acp.SessionModeState, []acp.SessionConfigOption) {
	ctx, cancel := context.WithTimeout(context.Background(), externalTimeout)
	defer cancel()
	modes, opts, err := a.External.Describe(ctx, ls.id)
	if err != nil {
		slog.Warn("acp: the session's agent could not be reached", "session", ls.id, "agent", ls.agent, "err", err)
		return nil, nil
	}
	return modes, opts
}

// setExternal forwards session/set_mode and set_config_option of a bound
// session to its agent.
func (a *Agent) setExternal(ls *liveSession, mode, configID string, value any) (any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), externalTimeout)
	defer cancel()
	if configID == "" {
		if err := a.External.SetMode(ctx, ls.id, mode); err != nil {
			return nil, externalError(err)
		}
		a.notify(ls.id, acp.SessionUpdate{SessionUpdate: "current_mode_update", CurrentModeID: mode})
		return acp.EmptyResponse{}, nil
	}
	opts, err := a.External.SetConfigOption(ctx, ls.id, configID, value)
	if err != nil {
		return nil, externalError(err)
	}
	return acp.SetSessionConfigOptionResponse{ConfigOptions: opts}, nil
}

// externalError is an agent's refusal as -32602 (what the client asked
// for is not offered), anything else as it is.
func externalError(err error) error {
	var rpc *jsonrpc.Error
	if errors.As(err, &rpc) {
		return rpc
	}
	return invalidParams(err.Error())
}

// externalAgents names the agents session/new's _meta.agent may name
// (initialize's _meta.acp_agents); none without External.
func (a *Agent) externalAgents() []string {
	if a.External == nil {
		return []string{}
	}
	return a.Engine.Config.ACPAgentNames()
}
