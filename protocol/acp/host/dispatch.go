package host

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/session"
)

// Dispatch runs each session's turns where the session belongs: one bound
// to an external ACP agent (session.Meta.ACP) on that agent, any other on
// the engine. The server hands it to /ws, /acp and the sessions API, so a
// client drives Claude Code or Codex through openheim with openheim's
// permission dialog, history and live fan-out. Agents start on their
// first turn and run until Close.
type Dispatch struct {
	Engine  *engine.Engine
	Version string
	Log     *slog.Logger
	Hooks   Hooks

	mu sync.Mutex
	// runners by agent name, and for an agent that takes its system
	// prompt when it starts, + "\x00" + the prompt.
	runners map[string]*Runner
	closed  bool
}

var _ engine.Runner = (*Dispatch)(nil)

// Prompt implements engine.Runner.
func (d *Dispatch) Prompt(ctx context.Context, req engine.Request) (session.Meta, event.End, error) {
	if req.SessionID == "" {
		return d.Engine.Prompt(ctx, req)
	}
	m, err := d.Engine.Store.LoadMeta(req.SessionID)
	if err != nil || m.ACP == nil {
		return d.Engine.Prompt(ctx, req) // it reports a missing session
	}
	r, err := d.runner(m.ACP.Agent, req.Identity)
	if err != nil {
		return session.Meta{}, event.End{}, err
	}
	return r.Prompt(ctx, req)
}

// Agent is the agent session id is bound to ("" for the engine's).
func (d *Dispatch) Agent(id string) string {
	m, err := d.Engine.Store.LoadMeta(id)
	if err != nil || m.ACP == nil {
		return ""
	}
	return m.ACP.Agent
}

// Runner is the Runner of agent name (for forks and settings between
// turns).
func (d *Dispatch) Runner(name string) (*Runner, error) { return d.runner(name, "") }

func (d *Dispatch) runner(name, identity string) (*Runner, error) {
	a, err := d.Engine.Config.ACPAgentNamed(name)
	if err != nil {
		return nil, &engine.UsageError{Err: err}
	}
	if !startPromptKinds[a.AgentKind()] {
		identity = "" // one process serves every system prompt
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, errors.New("acp agents: stopped")
	}
	key := name + "\x00" + identity
	if r := d.runners[key]; r != nil {
		return r, nil
	}
	if d.runners == nil {
		d.runners = map[string]*Runner{}
	}
	r := &Runner{Engine: d.Engine, Agent: name, Version: d.Version, Log: d.Log, Hooks: d.Hooks}
	d.runners[key] = r
	return r, nil
}

// Close stops every agent.
func (d *Dispatch) Close() error {
	d.mu.Lock()
	d.closed = true
	runners := d.runners
	d.runners = nil
	d.mu.Unlock()
	var wg sync.WaitGroup
	for _, r := range runners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.Close()
		}()
	}
	wg.Wait()
	return nil
}

// Fork forks session id: on its agent when it is bound to one (Runner.Fork),
// else openheim's own copy.
func (d *Dispatch) Fork(ctx context.Context, id string) (session.Meta, error) {
	name := d.Agent(id)
	if name == "" {
		return session.Fork(d.Engine.Store, id, -1, time.Now())
	}
	r, err := d.Runner(name)
	if err != nil {
		return session.Meta{}, err
	}
	return r.Fork(ctx, id)
}
