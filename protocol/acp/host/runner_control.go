package host

import (
	"context"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/runtime/engine"
)

// What front ends do with an agent's sessions between turns: change their
// mode, model and options, read what the agent offers, and manage the
// agent's own sessions and login.

// Open opens stored session id on the agent (reattaching it, set up as a
// turn would; a session bound to the agent before it had one there gets
// one now) and returns the agent's session id.
func (r *Runner) Open(ctx context.Context, id string) (ext string, h *Host, err error) {
	m, err := r.agentSession(id)
	if err != nil {
		return "", nil, err
	}
	if h, err = r.Host(ctx); err != nil {
		return "", nil, err
	}
	if m.ACP.SessionID == "" {
		servers, names := mcpServers(r.Engine.Config)
		if _, _, err := r.bindLate(ctx, h, m, engine.Request{}, r.sessionOptions(r.Engine.Config.WorkDir, servers, ""), names); err != nil {
			return "", nil, err
		}
		return m.ACP.SessionID, h, nil
	}
	ext = m.ACP.SessionID
	if r.isOpen(ext) {
		return ext, h, nil
	}
	servers, _ := mcpServers(r.Engine.Config)
	opts := r.sessionOptions(m.ACP.Cwd, servers, "")
	if err := h.Reattach(ctx, ext, opts); err != nil {
		return "", nil, err
	}
	if err := r.configure(ctx, h, ext, engine.Request{SessionID: id}); err != nil {
		return "", nil, err
	}
	r.markOpen(ext)
	return ext, h, nil
}

// Metadata is what the agent offers in stored session id: its modes,
// models, options and commands (ok false before the agent started it).
func (r *Runner) Metadata(ctx context.Context, id string) (md SessionMetadata, ok bool, err error) {
	ext, h, err := r.Open(ctx, id)
	if err != nil || ext == "" {
		return SessionMetadata{}, false, err
	}
	md, ok = h.Metadata(ext)
	return md, ok, nil
}

// control runs f on the agent's session of stored session id, opening it
// first; a session the agent has not started yet takes the setting as
// r.Initial instead (set when it starts).
func (r *Runner) control(ctx context.Context, id string, pending func(*InitialConfig), f func(h *Host, ext string) error) error {
	if id == "" {
		pending(&r.Initial)
		return nil
	}
	ext, h, err := r.Open(ctx, id)
	if err != nil {
		return err
	}
	if ext == "" {
		pending(&r.Initial)
		return nil
	}
	return f(h, ext)
}

// SetMode switches stored session id ("" the next new one) to mode, kept
// for when it is reopened.
func (r *Runner) SetMode(ctx context.Context, id, mode string) error {
	return r.control(ctx, id, func(c *InitialConfig) { c.Mode = mode }, func(h *Host, ext string) error {
		if err := h.SetMode(ctx, ext, mode); err != nil {
			return err
		}
		if m, err := r.Engine.Store.LoadMeta(id); err == nil && m.ACP != nil {
			m.ACP.Mode = mode
			return r.Engine.Store.SaveMeta(*m)
		}
		return nil
	})
}

// SetModel switches stored session id ("" the next new one) to model.
func (r *Runner) SetModel(ctx context.Context, id, model string) error {
	return r.control(ctx, id, func(c *InitialConfig) { c.Model = model }, func(h *Host, ext string) error {
		return h.SetModel(ctx, ext, model)
	})
}

// SetConfigOption sets option configID of stored session id ("" the next
// new one).
func (r *Runner) SetConfigOption(ctx context.Context, id, configID string, value any) error {
	return r.control(ctx, id, func(c *InitialConfig) {
		if c.Raw == nil {
			c.Raw = map[string]any{}
		}
		c.Raw[configID] = value
	}, func(h *Host, ext string) error {
		return h.SetConfigOption(ctx, ext, configID, value)
	})
}

// AgentSessions lists the agent's own sessions (session/list), in cwd
// when given.
func (r *Runner) AgentSessions(ctx context.Context, cwd string) ([]acp.SessionInfo, error) {
	h, err := r.Host(ctx)
	if err != nil {
		return nil, err
	}
	return h.ListSessions(ctx, cwd)
}

// CloseAgentSession ends one of the agent's sessions (session/close).
func (r *Runner) CloseAgentSession(ctx context.Context, ext string) error {
	h, err := r.Host(ctx)
	if err != nil {
		return err
	}
	err = h.CloseSession(ctx, ext)
	r.mu.Lock()
	delete(r.openIDs, ext)
	r.mu.Unlock()
	return err
}

// DeleteAgentSession removes one of the agent's sessions from its storage
// (session/delete).
func (r *Runner) DeleteAgentSession(ctx context.Context, ext string) error {
	h, err := r.Host(ctx)
	if err != nil {
		return err
	}
	err = h.DeleteSession(ctx, ext)
	r.mu.Lock()
	delete(r.openIDs, ext)
	r.mu.Unlock()
	return err
}

// Logout asks the agent to forget its credentials (where it offers that).
func (r *Runner) Logout(ctx context.Context) error {
	h, err := r.Host(ctx)
	if err != nil {
		return err
	}
	return h.Logout(ctx)
}
