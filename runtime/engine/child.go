package engine

import (
	"context"
	"log/slog"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
	"github.com/openheim/openheim/runtime/subagent"
)

// childSessions makes the sessions of the subagents a turn of session
// parent runs (delegate_task): a session of their own, titled by their
// name and task, in the parent's cwd, linked to the parent (Meta.Parent),
// announced on the parent's stream (event.SubagentStarted). Nobody else
// writes a session made this way while its turn runs: it is stored
// without a lease.
func (e *Engine) childSessions(parent, cwd, parentProvider string, sink event.Sink) func(context.Context, subagent.ChildSpec) (*subagent.Child, error) {
	return func(_ context.Context, spec subagent.ChildSpec) (*subagent.Child, error) {
		provider := spec.Provider
		if provider == "" {
			provider = parentProvider
		}
		meta := session.NewMeta(e.now())
		meta.Title = session.Str(session.Title("[" + spec.Name + "] " + spec.Task))
		meta.Cwd, meta.Model, meta.Provider = session.Str(cwd), session.Str(spec.Model), session.Str(provider)
		meta.Parent = &session.ParentRef{SessionID: parent, CallID: spec.CallID, Agent: spec.Name}
		if err := e.Store.Create(meta); err != nil {
			return nil, err
		}
		sink.Emit(event.Event{SessionID: parent, Kind: event.SubagentStarted,
			Child: &event.ChildSession{SessionID: meta.ID, CallID: spec.CallID, Agent: spec.Name}})
		id := meta.ID
		return &subagent.Child{
			SessionID: id,
			Persist:   func(msgs ...message.Message) error { return e.Store.Append(id, msgs...) },
			Done: func(end event.End) {
				m := meta
				m.UpdatedAt = e.now().UTC()
				if end.Usage != (message.Usage{}) {
					u := end.Usage
					m.ContextUsage = &u
				}
				m.AddUsage(provider+"/"+spec.Model, end.Total)
				if err := e.Store.SaveMeta(m); err != nil {
					slog.Warn("subagent: saving its session", "session", id, "err", err)
				}
			},
		}, nil
	}
}
