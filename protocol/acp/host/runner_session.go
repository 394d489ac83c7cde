package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
)

// The lifecycle of a Runner's sessions beyond their turns: their setup
// (InitialConfig), forks, deletion, and the agent's own session list.

// sessionOptions are what a session the Runner opens starts with: the
// work directory, openheim's MCP servers, and a turn's identity (an agent
// profile's instructions) appended to the agent's system prompt, else the
// profile's system prompt.
func (r *Runner) sessionOptions(cwd string, servers []json.RawMessage, identity string) SessionOptions {
	o := SessionOptions{Cwd: cwd, MCPServers: servers}
	if identity != "" {
		o.AppendSystemPrompt = identity
		return o
	}
	if a, err := r.Engine.Config.ACPAgentNamed(r.Agent); err == nil {
		o.SystemPrompt, o.AppendSystemPrompt = a.SystemPrompt, a.AppendSystemPrompt
	}
	return o
}

// configure sets up a session the Runner just opened (new, reattached or
// forked): the profile's settings, where the agent takes them (what it
// refuses is logged and left), then r.Initial and the turn's model, which
// must take. The report is kept (Report).
func (r *Runner) configure(ctx context.Context, h *Host, ext string, req engine.Request) error {
	var prof InitialConfig
	if a, err := r.Engine.Config.ACPAgentNamed(r.Agent); err == nil {
		prof = InitialConfig{Mode: a.Mode, Model: a.Model, Effort: a.Effort, Raw: a.Config}
	}
	// A reopened session gets back the mode it was left in.
	if m, err := r.Engine.Store.LoadMeta(req.SessionID); req.SessionID != "" && err == nil && m.ACP != nil && m.ACP.Mode != "" {
		prof.Mode = m.ACP.Mode
	}
	strict := r.Initial
	if req.Model != "" && req.Model != r.Agent {
		strict.Model = req.Model
	}
	// What the caller chose replaces the profile's choice.
	if strict.Mode != "" {
		prof.Mode = ""
	}
	if strict.Model != "" {
		prof.Model = ""
	}
	if strict.Effort != "" {
		prof.Effort = ""
	}
	rep := h.ApplyInitialConfig(ctx, ext, prof)
	for _, s := range rep.Skipped {
		h.log.Warn(fmt.Sprintf("acp agent %s: [acp_agents.%s] %s = %v left out: %s", r.Agent, r.Agent, s.Key, s.Value, s.Reason))
	}
	if !strict.Empty() {
		srep := h.ApplyInitialConfig(ctx, ext, strict)
		rep.Applied = append(rep.Applied, srep.Applied...)
		rep.Skipped = append(rep.Skipped, srep.Skipped...)
		if err := srep.Err(); err != nil {
			r.keepReport(ext, rep)
			return &engine.UsageError{Err: err}
		}
	}
	r.keepReport(ext, rep)
	return nil
}

// configureTurn applies the turn's model to a session already open.
func (r *Runner) configureTurn(ctx context.Context, h *Host, ext string, req engine.Request) error {
	if req.Model == "" || req.Model == r.Agent {
		return nil
	}
	rep := h.ApplyInitialConfig(ctx, ext, InitialConfig{Model: req.Model})
	if err := rep.Err(); err != nil {
		return &engine.UsageError{Err: err}
	}
	return nil
}

func (r *Runner) keepReport(ext string, rep InitialConfigReport) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.reports == nil {
		r.reports = map[string]InitialConfigReport{}
	}
	r.reports[ext] = rep
}

// Report is what the agent accepted of the settings asked of session id
// (an openheim session) when this Runner opened it.
func (r *Runner) Report(id string) (InitialConfigReport, bool) {
	m, err := r.Engine.Store.LoadMeta(id)
	if err != nil || m.ACP == nil {
		return InitialConfigReport{}, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	rep, ok := r.reports[m.ACP.SessionID]
	return rep, ok
}

// discard ends a session the agent opened for nothing (its setup failed,
// or the openheim side of a fork could not be stored): closed where the
// agent can, else only forgotten.
func (r *Runner) discard(ctx context.Context, h *Host, ext string) {
	if h.Capabilities().CloseSession {
		if err := h.CloseSession(ctx, ext); err != nil {
			h.log.Debug("acp host: closing a discarded session", "session", ext, "err", err)
		}
		return
	}
	h.forget(ext)
}

// bindLate starts the agent's session of a stored session bound to this
// agent before it had one (made by the server): meta records it.
func (r *Runner) bindLate(ctx context.Context, h *Host, meta *session.Meta, req engine.Request, opts SessionOptions, names []string) (string, int, error) {
	if meta.ACP.Cwd != "" {
		opts.Cwd = meta.ACP.Cwd
	} else if c := deref(meta.Cwd); c != "" {
		opts.Cwd = c
	}
	ext, err := h.NewSession(ctx, opts)
	if err != nil {
		return "", 0, err
	}
	if err := r.configure(ctx, h, ext, req); err != nil {
		r.discard(ctx, h, ext)
		return "", 0, err
	}
	meta.ACP = &session.ACPBinding{Agent: r.Agent, SessionID: ext, Cwd: opts.Cwd, MCPServers: names}
	meta.Provider, meta.Model, meta.Cwd = session.Str("acp"), session.Str(r.Agent), session.Str(opts.Cwd)
	if meta.Title == nil && len(req.Input) > 0 {
		meta.Title = session.Str(session.Title(message.Message{Content: req.Input}.JoinText()))
	}
	if err := r.Engine.Store.SaveMeta(*meta); err != nil {
		r.discard(ctx, h, ext)
		return "", 0, err
	}
	stored := 0
	if c, err := r.Engine.Store.Load(meta.ID); err == nil {
		stored = len(c.Messages)
	}
	r.markOpen(ext)
	return opts.Cwd, stored, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// agentSession is stored session id, which must be bound to this agent.
func (r *Runner) agentSession(id string) (*session.Meta, error) {
	m, err := r.Engine.Store.LoadMeta(id)
	if err != nil {
		return nil, &engine.UsageError{Err: err}
	}
	if m.ACP == nil || m.ACP.Agent != r.Agent {
		return nil, &engine.UsageError{Err: fmt.Errorf("session %s was not run by ACP agent %s", m.ID, r.Agent)}
	}
	return m, nil
}

// ErrCannotFork says the agent offers no session/fork.
var ErrCannotFork = errors.New("cannot fork its sessions (no session/fork in its capabilities)")

// Fork copies stored session id into a new one, the agent's session with
// it (session/fork): the agent must offer that, or nothing is made.
// Forking a session the agent has not started yet copies only openheim's
// side.
func (r *Runner) Fork(ctx context.Context, id string) (session.Meta, error) {
	m, err := r.agentSession(id)
	if err != nil {
		return session.Meta{}, err
	}
	h, err := r.Host(ctx)
	if err != nil {
		return session.Meta{}, err
	}
	var ext string
	if m.ACP.SessionID != "" {
		if !h.Capabilities().ForkSession {
			return session.Meta{}, &engine.UsageError{Err: fmt.Errorf("acp agent %s %w; continue the session itself, or start a new one", r.Agent, ErrCannotFork)}
		}
		servers, _ := mcpServers(r.Engine.Config)
		if ext, err = h.ForkSession(ctx, m.ACP.SessionID, SessionOptions{Cwd: m.ACP.Cwd, MCPServers: servers}); err != nil {
			return session.Meta{}, fmt.Errorf("forking %s session %s: %w", r.Agent, m.ACP.SessionID, err)
		}
	}
	forked, err := session.Fork(r.Engine.Store, id, -1, time.Now())
	if err == nil {
		b := *m.ACP
		b.SessionID = ext
		forked.ACP = &b
		if err = r.Engine.Store.SaveMeta(forked); err != nil {
			r.Engine.Store.Purge(forked.ID)
		}
	}
	if err != nil {
		if ext != "" {
			r.discard(ctx, h, ext)
		}
		return session.Meta{}, err
	}
	if ext != "" {
		r.markOpen(ext)
	}
	return forked, nil
}

// DeleteSession deletes the agent's side of stored session id
// (session/delete) where the agent offers that; deleted reports whether
// it did. openheim's side is the caller's to remove.
func (r *Runner) DeleteSession(ctx context.Context, id string) (deleted bool, err error) {
	m, err := r.agentSession(id)
	if err != nil || m.ACP.SessionID == "" {
		return false, err
	}
	h, err := r.Host(ctx)
	if err != nil {
		return false, err
	}
	if !h.Capabilities().DeleteSession {
		return false, nil
	}
	if err := h.DeleteSession(ctx, m.ACP.SessionID); err != nil {
		return false, err
	}
	r.mu.Lock()
	delete(r.openIDs, m.ACP.SessionID)
	r.mu.Unlock()
	return true, nil
}

// rememberMode keeps the agent's current mode in the session's binding.
func (r *Runner) rememberMode(meta *session.Meta) {
	r.mu.Lock()
	h := r.host
	r.mu.Unlock()
	if h == nil || meta.ACP == nil {
		return
	}
	if md, ok := h.Metadata(meta.ACP.SessionID); ok && md.CurrentModeID != "" {
		meta.ACP.Mode = md.CurrentModeID
	}
}

// serversFor are openheim's MCP servers in ACP's shape, without the http
// ones an agent that cannot connect to them would refuse (a warning says
// so).
func (r *Runner) serversFor(h *Host) ([]json.RawMessage, []string) {
	servers, names := mcpServers(r.Engine.Config)
	if h.Capabilities().MCP.HTTP {
		return servers, names
	}
	var keptS []json.RawMessage
	var keptN []string
	for i, raw := range servers {
		var s struct{ Type string }
		if json.Unmarshal(raw, &s) == nil && s.Type == "http" {
			h.log.Warn(fmt.Sprintf("acp agent %s takes no http MCP servers (mcpCapabilities.http); %s is left out", r.Agent, names[i]))
			continue
		}
		keptS, keptN = append(keptS, raw), append(keptN, names[i])
	}
	return keptS, keptN
}

// checkPrompt refuses content the agent said it does not take
// (promptCapabilities): images without image, audio without audio.
func checkPrompt(h *Host, input []message.Block) error {
	caps := h.Capabilities().Prompt
	for _, b := range input {
		if b.Type == message.TypeImage && !caps.Image {
			return &engine.UsageError{Err: fmt.Errorf("acp agent %s takes no images (promptCapabilities.image)", h.spec.Name)}
		}
	}
	return nil
}
