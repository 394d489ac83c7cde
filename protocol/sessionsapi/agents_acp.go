package sessionsapi

import (
	"context"
	"errors"

	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/session"
)

// agentForker is a Runner that forks the sessions an external ACP agent
// runs on that agent (protocol/acp/host's Dispatch).
type agentForker interface {
	Fork(ctx context.Context, id string) (session.Meta, error)
}

// forkConv copies conv (its first upTo messages; -1 all). A session an
// external agent runs is forked on the agent, whole: an agent that cannot
// fork is refused, and nothing is copied.
func (a *API) forkConv(ctx context.Context, conv *session.Conversation, upTo int) (session.Meta, error) {
	if conv.Meta.ACP == nil {
		return session.Fork(a.opts.Store, conv.Meta.ID, upTo, a.opts.Now())
	}
	f, ok := a.opts.Runner.(agentForker)
	switch {
	case !ok:
		return session.Meta{}, badRequest("session %s is run by ACP agent %s, which this server does not reach", conv.Meta.ID, conv.Meta.ACP.Agent)
	case upTo >= 0 && upTo < len(conv.Messages):
		return session.Meta{}, badRequest("session %s is run by ACP agent %s, which forks a session whole: up_to_response_id does not apply", conv.Meta.ID, conv.Meta.ACP.Agent)
	}
	m, err := f.Fork(ctx, conv.Meta.ID)
	var ue *engine.UsageError
	if errors.As(err, &ue) {
		return session.Meta{}, badRequest("%v", err)
	}
	return m, err
}

// bindToACPAgent binds a new session of an agent naming an ACP agent to
// it: its turns run there (the server's Runner dispatches by the
// binding), its session there starts with the first turn, and its model
// override is the agent's own model.
func bindToACPAgent(ag Agent, req createRequest, s *settings, meta *session.Meta, cwd string) {
	if req.ModelOverride != nil && *req.ModelOverride != "" {
		s.ModelOverride = req.ModelOverride
	}
	meta.Provider, meta.Model = session.Str("acp"), session.Str(ag.ACPAgent)
	meta.ACP = &session.ACPBinding{Agent: ag.ACPAgent, Cwd: cwd}
}
