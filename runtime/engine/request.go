package engine

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/permission"
	"github.com/openheim/openheim/runtime/tools"
)

// Request is one prompt: the session and input, the model and profile
// that answer, and three parts for the tools: where they come from
// besides the built-ins (Tools), which are offered (Filter) and who
// decides their calls (Gate). A runner that cannot honour a part (an
// external agent has its own tools) leaves it unused.
type Request struct {
	SessionID string          // continue this session; "" starts a new one
	Input     []message.Block // the user's message
	// Sink receives the turn's events, opening with a session_info_update
	// (event.SessionInfoUpdate); nil discards them.
	Sink event.Sink
	// Inbox hands over user messages that arrived while the turn ran; the
	// loop takes them in before each model call after the first.
	Inbox func() []message.Message

	Provider string // "" = the session's, else the default
	Model    string
	// Identity replaces system.md for this turn (an agent profile's
	// instructions); "" keeps system.md.
	Identity string
	// Skills to activate (skills/<name>.md), stored with the session; nil
	// keeps the session's (a new session gets the config's default_skills).
	Skills []string
	// MaxIterations overrides max_iterations when positive.
	MaxIterations int
	// Record writes the turn's model replies into a replay cassette at this
	// path; "" falls back to the config's record_dir, if any.
	Record string

	// WorkDir confines the tools; "" means the config's work_dir.
	WorkDir string
	// FS serves the file tools' reads and writes (an editor's buffers over
	// ACP); nil is the local disk.
	FS     tools.FS
	Tools  ToolSources
	Filter ToolFilter
	Gate   Gate
}

// ToolSources are the tools a turn offers besides the built-ins, memory
// and the engine's MCP servers; the zero value adds none.
type ToolSources struct {
	// MCP offers the tools of MCP servers added for this session only
	// (ACP session/new mcpServers).
	MCP ToolSource
	// Extra tools for this turn only, run on the caller's side (the
	// sessions API's client-side tools): offered whatever the Filter, and
	// their calls pass no Gate (the caller asks its own user).
	Extra []tools.Tool
}

// ToolFilter narrows the tools a turn offers; the zero filter keeps all.
type ToolFilter struct {
	// ReadOnly keeps only the tools that change nothing (architect mode).
	ReadOnly bool
	// Only, when not nil, keeps only the tools of these names (an agent
	// profile's tool list).
	Only []string
}

// Permit decides whether a tool call, of the tool's kind, may run. It may
// block (asking someone) and is called concurrently.
type Permit func(ctx context.Context, call message.Block, kind string) bool

// Gate decides a turn's tool calls: the config's permission rules, asking
// an Asker about what they say to ask about (Asking), or a decision taken
// elsewhere (Delegated). The zero Gate is the rules with no one to ask:
// what they say to ask about is allowed.
type Gate struct {
	asker  permission.Asker
	permit Permit
}

// Asking is the config's rules asking asker; its "always" answers are kept
// per session for as long as the engine runs (or until Forget).
func Asking(asker permission.Asker) Gate { return Gate{asker: asker} }

// Delegated replaces the rules by permit (a subagent on an external agent
// is judged by its parent turn's gate).
func Delegated(permit Permit) Gate { return Gate{permit: permit} }

// Permit is the function that decides session sessionID's calls under g.
func (e *Engine) Permit(sessionID string, g Gate) Permit {
	if g.permit != nil {
		return g.permit
	}
	gate := e.gate().WithAsker(g.asker)
	return func(ctx context.Context, call message.Block, kind string) bool {
		ok, err := gate.Check(ctx, permission.Request{
			SessionID: sessionID, ToolCallID: call.ID, Tool: call.Name, Kind: kind,
			Title: call.Name, Args: json.RawMessage(call.Arguments),
		})
		if err != nil && ctx.Err() == nil {
			slog.Warn("permission request failed; the tool call is refused", "tool", call.Name, "err", err)
		}
		return ok
	}
}

// Forget drops a session's remembered permission answers (its client went
// away), so a long-running server does not keep them forever.
func (e *Engine) Forget(sessionID string) { e.gate().Forget(sessionID) }

func (e *Engine) gate() *permission.Gate {
	e.gateOnce.Do(func() { e.rules = permission.NewGate(permission.Rules(e.Config.Permissions), nil) })
	return e.rules
}

// turnPermit is the gate of a turn on sessionID: req's, with the Extra
// tools let through.
func (e *Engine) turnPermit(sessionID string, req Request) Permit {
	permit := e.Permit(sessionID, req.Gate)
	if len(req.Tools.Extra) == 0 {
		return permit
	}
	own := map[string]bool{}
	for _, t := range req.Tools.Extra {
		own[t.Spec().Name] = true
	}
	return func(ctx context.Context, call message.Block, kind string) bool {
		return own[call.Name] || permit(ctx, call, kind)
	}
}
