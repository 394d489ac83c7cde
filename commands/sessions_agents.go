package commands

import (
	"context"
	"fmt"

	"github.com/openheim/openheim/protocol/acp/host"
	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/session"
)

// agentRunners starts the Runners of the agents that sessions are bound
// to, once each, for the session commands that reach the agents (rm,
// fork).
type agentRunners struct {
	config  func() (*config.Config, error)
	runtime func(ctx context.Context, cfg *config.Config, s *Sessions, withMCP bool) (*Runtime, func())
	sess    *Sessions

	rt      *Runtime
	release func()
	runners map[string]*host.Runner
	stops   []func()
}

func (a *agentRunners) get(ctx context.Context, name string) (*host.Runner, error) {
	if r := a.runners[name]; r != nil {
		return r, nil
	}
	if a.rt == nil {
		cfg, err := a.config()
		if err != nil {
			return nil, err
		}
		a.rt, a.release = a.runtime(ctx, cfg, a.sess, false)
	}
	if _, err := a.rt.Engine.Config.ACPAgentNamed(name); err != nil {
		return nil, err
	}
	r, stop := turnRunner(a.rt.Engine, name)
	hr := hostRunner(r)
	if hr == nil {
		stop()
		return nil, fmt.Errorf("acp agent %s is not available here", name)
	}
	if a.runners == nil {
		a.runners = map[string]*host.Runner{}
	}
	a.runners[name], a.stops = hr, append(a.stops, stop)
	return hr, nil
}

func (a *agentRunners) close() {
	for _, stop := range a.stops {
		stop()
	}
	if a.release != nil {
		a.release()
	}
}

// deleteOnAgents deletes the agents' side of the sessions bound to one
// (session/delete, where the agent offers it) and says what became of
// each, by session id. A failure is reported, not fatal: openheim's side
// is removed anyway.
func deleteOnAgents(ctx context.Context, a *agentRunners, metas []*session.Meta) map[string]string {
	notes := map[string]string{}
	for _, m := range metas {
		if m.ACP == nil || m.ACP.SessionID == "" {
			continue
		}
		name := m.ACP.Agent
		r, err := a.get(ctx, name)
		var deleted bool
		if err == nil {
			deleted, err = r.DeleteSession(ctx, m.ID)
		}
		switch {
		case err != nil:
			notes[m.ID] = fmt.Sprintf("(%s's session %s was not deleted: %v)", name, m.ACP.SessionID, err)
		case deleted:
			notes[m.ID] = fmt.Sprintf("(and %s's session %s)", name, m.ACP.SessionID)
		default:
			notes[m.ID] = fmt.Sprintf("(%s keeps its session %s: it offers no session/delete)", name, m.ACP.SessionID)
		}
	}
	return notes
}

// forkOnAgent forks a session an agent ran, on the agent (whole only).
func forkOnAgent(ctx context.Context, opts *SessionsForkOptions, s *Sessions, m *session.Meta) error {
	if opts.At >= 0 {
		if n, err := s.Store.MessageCount(m.ID); err != nil || opts.At < n {
			return usageErr(fmt.Errorf("sessions fork: session %s was run by ACP agent %s, which forks a session whole: --at does not apply", m.ID, m.ACP.Agent), "")
		}
	}
	agents := &agentRunners{config: opts.Config, runtime: opts.Runtime, sess: s}
	defer agents.close()
	r, err := agents.get(ctx, m.ACP.Agent)
	if err != nil {
		return failure(fmt.Errorf("sessions fork: %w", err))
	}
	id, err := forkSession(ctx, r, s, "sessions fork", m.ID)
	if err != nil {
		return err
	}
	fmt.Fprintln(opts.IO.Out, id)
	return nil
}
