package host

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/permission"
)

// Projection is openheim's rules set into an agent's own settings, for the
// agents that have some (a sandbox, permission rules): arguments the host
// appends to its command line (after the configured ones, so they win)
// and _meta it merges into every session it opens. It narrows what the
// agent does on its own, without asking; what the agent asks about still
// goes to openheim's gate. This is the first piece of per-agent profiles:
// one projector per agent kind.
type Projection struct {
	Args        []string
	SessionMeta map[string]any
	// UnsafeModes are session modes in which the agent acts without
	// asking; a session the agent opens in one (its own settings chose
	// it) is switched to SafeMode with session/set_mode before it is used,
	// or not used at all.
	UnsafeModes []string
	SafeMode    string
	// Env is added to the agent's environment (OpenCode reads its config
	// from OPENCODE_CONFIG_CONTENT).
	Env map[string]string
	// Files are written to a private directory before the agent starts,
	// each "{{file:NAME}}" in Args replaced by its path (Codex reads a
	// replaced system prompt from a file); removed when it ends.
	Files map[string]string
	// SystemPrompt puts a session's system prompt where the agent reads
	// it: the _meta of session/new (replace says whether it replaces the
	// agent's own or adds to it). nil: seed 002's reserved keys, which an
	// agent may read or not.
	SystemPrompt func(replace bool, text string) map[string]any
	// ProcessPrompt is set when the agent takes its system prompt only
	// when it starts (Codex): a session with another one cannot run on
	// that process.
	ProcessPrompt bool
	// Notes say what the projection could not set up here; the host logs
	// them when it starts the agent.
	Notes []string
}

// Bounds are the parts of openheim's config an agent's settings are set
// from: the work directory, the shell, the permission rules (one set of
// rules for every agent), and the agent's profile ([acp_agents.X]).
type Bounds struct {
	WorkDir    string
	AllowShell bool
	Rules      permission.Rules
	Profile    config.ACPProfile
	// Prompt is the system prompt of the sessions the process runs, for
	// agents that take it only at start (ProcessPrompt); the profile's
	// system_prompt or append_system_prompt when empty.
	Prompt SystemPrompt
}

// SystemPrompt is a system prompt that replaces the agent's or is
// appended to it (seed 002's SystemPromptProjection).
type SystemPrompt struct {
	Replace bool
	Text    string
}

// projectors by agent kind (config.AgentKind*); other kinds get none.
var projectors = map[string]func(Bounds) Projection{
	config.AgentKindClaude:   projectClaude,
	config.AgentKindCodex:    projectCodex,
	config.AgentKindOpenCode: projectOpenCode,
}

// Project returns the projection for an agent of the given kind.
func Project(kind string, b Bounds) Projection {
	if p := projectors[kind]; p != nil {
		return p(b)
	}
	return Projection{}
}

// ProfilePrompt is the profile's system prompt, if it has one.
func ProfilePrompt(p config.ACPProfile) SystemPrompt {
	if p.SystemPrompt != "" {
		return SystemPrompt{Replace: true, Text: p.SystemPrompt}
	}
	return SystemPrompt{Text: p.AppendSystemPrompt}
}

// kindDecision is what openheim's rules say about an external agent's
// requests of a kind (the gate sees them under their kind), and whether
// commands may run at all (allow_shell, or a rule allowing execute).
func (b Bounds) kindDecision(kind string) permission.Decision {
	d := b.Rules.Decide(kind, kind)
	if kind == "execute" && !b.AllowShell && d != permission.Allow {
		return permission.Deny
	}
	return d
}

// mergeMeta returns base with over merged in: objects merge key by key,
// anything else from over replaces base's.
func mergeMeta(base, over map[string]any) map[string]any {
	if len(over) == 0 {
		return base
	}
	out := maps.Clone(base)
	if out == nil {
		out = map[string]any{}
	}
	for k, v := range over {
		bm, ok1 := out[k].(map[string]any)
		om, ok2 := v.(map[string]any)
		if ok1 && ok2 {
			out[k] = mergeMeta(bm, om)
		} else {
			out[k] = v
		}
	}
	return out
}

// keepSafeMode switches session id out of an unsafe mode its agent opened
// it in (raw is the agent's answer to session/new, load, resume or fork,
// which carries modes.currentModeId when the agent has modes).
func (h *Host) keepSafeMode(ctx context.Context, id string, raw json.RawMessage) error {
	p := h.opts.Projection
	var resp struct {
		Modes *struct {
			CurrentModeID string `json:"currentModeId"`
		} `json:"modes"`
	}
	if json.Unmarshal(raw, &resp) != nil || resp.Modes == nil || !slices.Contains(p.UnsafeModes, resp.Modes.CurrentModeID) {
		return nil
	}
	mode := resp.Modes.CurrentModeID
	if err := h.call(ctx, acp.MethodSessionSetMode, acp.SetSessionModeRequest{SessionID: id, ModeID: p.SafeMode}, nil); err != nil {
		return fmt.Errorf("acp agent %s opened session %s in mode %q, where it acts without asking, and did not leave it: %w", h.spec.Name, id, mode, err)
	}
	if s := h.session(id); s != nil {
		s.state.mu.Lock()
		s.state.setMode(p.SafeMode)
		s.state.mu.Unlock()
	}
	h.log.Warn(fmt.Sprintf("acp agent %s: session %s opened in mode %q (its settings); switched to %q so that it asks", h.spec.Name, id, mode, p.SafeMode))
	return nil
}
