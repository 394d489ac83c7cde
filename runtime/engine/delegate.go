package engine

import (
	"context"
	"errors"
	"log/slog"

	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/subagent"
	"github.com/openheim/openheim/runtime/tools"
)

// addDelegate offers delegate_task: subagents from agents/<name>.md or
// defined inline, sharing the turn's tools, permission gate, cancellation
// and event stream. A malformed profile is a usage error naming the file.
func (e *Engine) addDelegate(reg *tools.Registry, parent *config.Resolved, parentProvider llm.Provider,
	permit func(context.Context, message.Block, string) bool, sink event.Sink, sessionID, cwd string) error {
	profiles, err := subagent.LoadProfiles(e.Config.AgentsDir())
	if err != nil {
		return &UsageError{err}
	}
	model := func(r *config.Resolved) subagent.Model {
		return subagent.Model{Name: r.Model, MaxTokens: r.Provider.MaxTokens, ContextWindow: int64(r.Provider.ContextWindow)}
	}
	reg.Add(subagent.NewTool(subagent.Options{
		Profiles: profiles,
		Tools:    reg,
		Provider: func(provider, name string) (llm.Provider, subagent.Model, error) {
			if provider == "" && name == "" {
				return parentProvider, model(parent), nil
			}
			if provider == "" {
				provider = parent.ProviderName
			}
			r, err := e.Config.Resolve(provider, name)
			if err != nil {
				return nil, subagent.Model{}, err
			}
			p, err := NewProvider(r)
			return p, model(r), err
		},
		ParentModel:   model(parent),
		MaxIterations: e.Config.MaxIterations,
		Permit:        permit,
		Sink:          sink,
		SessionID:     sessionID,
		CallID:        tools.CallID,
		Child:         e.childSessions(sessionID, cwd, parent.ProviderName, sink),
		External:      e.external,
	}))
	return nil
}

// external runs a delegated task on an external ACP agent, as a session of
// its own (titled by the task, so it can be looked at later).
func (e *Engine) external(ctx context.Context, agent, task string, sink event.Sink, permit func(context.Context, message.Block, string) bool) (event.End, error) {
	if e.ExternalAgent == nil {
		return event.End{}, errors.New("external ACP agents are not available here")
	}
	r, stop := e.ExternalAgent(agent)
	defer stop()
	_, end, err := r.Prompt(ctx, Request{Input: []message.Block{message.Text(task)}, Sink: sink, Gate: Delegated(permit)})
	return end, err
}

// listDelegate adds delegate_task for listings (the API, initialize): its
// spec names the profiles. A turn replaces it with one bound to the turn
// (addDelegate); this one refuses to run.
func (e *Engine) listDelegate(reg *tools.Registry) {
	profiles, err := subagent.LoadProfiles(e.Config.AgentsDir())
	if err != nil {
		slog.Warn("subagent profiles", "err", err)
		profiles = nil
	}
	reg.Add(subagent.NewTool(subagent.Options{
		Profiles: profiles,
		Tools:    reg,
		Provider: func(string, string) (llm.Provider, subagent.Model, error) {
			return nil, subagent.Model{}, errors.New("delegate_task runs only inside a turn")
		},
		Permit: func(context.Context, message.Block, string) bool { return false },
		Sink:   event.Discard,
	}))
}
