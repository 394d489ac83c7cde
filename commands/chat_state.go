package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/openheim/openheim/commands/tui"
	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/mcp"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/permission"
	"github.com/openheim/openheim/runtime/session"
	"github.com/openheim/openheim/runtime/skills"
)

// chat is one chat process's state: the session it talks in and the
// choices (model, skills, mode) the next turn uses. The REPL and the script
// runner drive it; slash commands change it.
type chat struct {
	ios     *IOStreams
	out     io.Writer // where slash commands print
	cfg     *config.Config
	sess    *Sessions
	home    string // the data directory (the REPL's input history)
	eng     *engine.Engine
	runner  engine.Runner // the engine, or an external ACP agent (--agent)
	servers *mcp.Manager
	version string
	style   tui.Style // the zero style (no colour) unless on a terminal
	// pick asks the user to choose (the REPL); nil in scripts.
	pick func(prompt string) (string, error)

	// agent is the external ACP agent running the turns ("" the engine;
	// chat_agent.go); stopRunner stops it; agentModel is --model for it.
	agent, agentModel string
	stopRunner        func()

	sessionID       string   // "" until the first turn of a new session
	provider, model string   // "" = the session's, else the default
	skills          []string // nil = the session's, or default_skills for a new one
	readOnly        bool     // architect mode
	thinking        bool     // show the model's thinking
	denyAsk         bool
	mcpReported     bool // failed MCP servers were reported in the NDJSON

	// What /usage reports.
	turns        int
	calls        int   // model calls in this chat
	processed    int64 // tokens of those calls, summed
	lastUsage    message.Usage
	ctxUsed      int64
	ctxSize      int64
	lastSessions []session.Meta // what /sessions listed, for picking by number
}

// turn runs one prompt in the current session (creating it on the first
// turn) and remembers what /usage and the next turn need.
func (c *chat) turn(ctx context.Context, input []message.Block, sink event.Sink, asker permission.Asker) (session.Meta, event.End, error) {
	counting := event.SinkFunc(func(e event.Event) {
		if e.Kind == event.UsageUpdate && e.Usage != nil {
			c.calls++
			c.processed += e.Usage.Used
			c.ctxUsed, c.ctxSize = e.Usage.Used, e.Usage.Size
		}
		sink.Emit(e)
	})
	req := engine.Request{
		SessionID: c.sessionID, Provider: c.provider, Model: c.model, Input: input,
		Sink: counting, Gate: engine.Asking(asker), Filter: engine.ToolFilter{ReadOnly: c.readOnly}, Skills: c.skills,
	}
	if c.agent != "" {
		req.Provider, req.Model = "", "" // the agent's own (/model)
	}
	meta, end, err := c.runner.Prompt(ctx, req)
	if err != nil {
		return meta, end, err
	}
	c.turns++
	c.sessionID = meta.ID
	if c.agent == "" {
		c.provider, c.model = deref(meta.Provider), deref(meta.Model)
	}
	c.skills = slices.Clone(meta.Skills)
	if end.Iterations > 0 {
		c.lastUsage = end.Usage
	}
	return meta, end, nil
}

// resume makes id the current session; its model and skills apply unless
// chosen explicitly (--model, --skills) before.
func (c *chat) resume(id string) error {
	m, err := c.sess.Store.LoadMeta(id)
	if err != nil {
		return failure(fmt.Errorf("chat: %w", err))
	}
	c.sessionID = m.ID
	// The session continues on whoever ran it: its agent, or the engine.
	if m.ACP != nil {
		c.useAgent(m.ACP.Agent)
	} else {
		c.useAgent("")
	}
	if m.Provider != nil && m.Model != nil && c.provider == "" {
		// A model the config no longer offers falls back to the default.
		if _, err := c.cfg.Resolve(*m.Provider, *m.Model); err == nil {
			c.provider, c.model = *m.Provider, *m.Model
		}
	}
	if c.skills == nil {
		c.skills = slices.Clone(m.Skills)
	}
	c.ctxUsed, c.ctxSize, c.lastUsage = 0, 0, message.Usage{}
	if m.ContextUsage != nil {
		c.lastUsage = *m.ContextUsage
		c.ctxUsed = m.ContextUsage.Total()
	}
	return nil
}

// newSession starts afresh: the next turn creates a session with the
// current model and mode and the default skills.
func (c *chat) newSession() {
	c.sessionID = ""
	c.skills = nil
	c.ctxUsed, c.ctxSize, c.lastUsage = 0, 0, message.Usage{}
}

// setModel switches the model of the next turns ("provider/model" or a
// model name).
func (c *chat) setModel(ref string) error {
	r, err := c.cfg.ResolveRef(ref)
	if err != nil {
		return err
	}
	c.provider, c.model = r.ProviderName, r.Model
	return nil
}

// currentModel is "provider/model" as the next turn will resolve it (the
// agent's name for an external agent).
func (c *chat) currentModel() string {
	if c.agent != "" {
		return c.agent + " (ACP agent)"
	}
	r, err := c.cfg.Resolve(c.provider, c.model)
	if err != nil {
		return "(none: " + err.Error() + ")"
	}
	return r.ProviderName + "/" + r.Model
}

// activeSkills are the skills the next turn runs with.
func (c *chat) activeSkills() []string {
	if c.skills != nil {
		return c.skills
	}
	if c.sessionID != "" {
		if m, err := c.sess.Store.LoadMeta(c.sessionID); err == nil {
			return m.Skills
		}
	}
	return c.cfg.DefaultSkills
}

// availableSkills lists skills/<name>.md of the config directory.
func (c *chat) availableSkills() []string {
	names, err := skills.List(c.cfg.SkillsDir())
	if err != nil {
		return nil
	}
	return names
}

// meta loads the current session's meta; ok is false before its first turn.
func (c *chat) meta() (*session.Meta, bool, error) {
	if c.sessionID == "" {
		return nil, false, nil
	}
	m, err := c.sess.Store.LoadMeta(c.sessionID)
	if errors.Is(err, session.ErrNotFound) {
		return nil, false, fmt.Errorf("the current session %s no longer exists; /new starts another", c.sessionID)
	}
	return m, err == nil, err
}

// recentSessions lists up to n sessions, most recently updated first.
func (c *chat) recentSessions(n int) ([]session.Meta, error) {
	all, err := c.sess.Files.List()
	if err != nil {
		return nil, err
	}
	slices.SortFunc(all, func(a, b session.Meta) int { return b.UpdatedAt.Compare(a.UpdatedAt) })
	if len(all) > n {
		all = all[:n]
	}
	return all, nil
}

// fork copies the current session and continues in the copy (an agent's
// session is forked on the agent: session/fork).
func (c *chat) fork(ctx context.Context) (old, forked string, err error) {
	if c.sessionID == "" {
		return "", "", errors.New("nothing to fork yet: the session starts with the first prompt")
	}
	if r := c.agentRunner(); r != nil {
		m, err := r.Fork(ctx, c.sessionID)
		if err != nil {
			return "", "", err
		}
		old, c.sessionID = c.sessionID, m.ID
		return old, m.ID, nil
	}
	m, err := session.Fork(c.sess.Store, c.sessionID, -1, time.Now())
	if err != nil {
		return "", "", err
	}
	old, c.sessionID = c.sessionID, m.ID
	return old, m.ID, nil
}
