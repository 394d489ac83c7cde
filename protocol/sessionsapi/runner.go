package sessionsapi

import (
	"context"
	"errors"

	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/ids"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
)

// runnerState is the session's queued input: messages posted while a turn
// runs wait here and are taken in at the turn's next checkpoint, or start
// the next turn.
type runnerState struct {
	queue         []queuedInput
	consumed      []string // queued ids of inputs handed to a turn, oldest first
	starting      bool     // a turn is being started
	interruptedAt any      // unix seconds of the last interrupt, or nil
	dropped       []string // queued ids an interrupt dropped
}

type queuedInput struct {
	id  string
	msg message.Message
}

// consumedID is the queued id of the input just stored, or the item's own
// id for input that was never queued here (a prompt on /ws).
func (r *runnerState) consumedID(itemID string) string {
	if len(r.consumed) == 0 {
		return itemID
	}
	id := r.consumed[0]
	r.consumed = r.consumed[1:]
	return id
}

// post queues a user message; it starts a turn if none is running.
func (t *tracker) post(content []message.Block) (string, error) {
	t.mu.Lock()
	if t.retired {
		t.mu.Unlock()
		return "", errRetired
	}
	if t.closed {
		t.mu.Unlock()
		return "", notFound("session %q not found", t.conv)
	}
	id := ids.New("qi_")
	t.runner.queue = append(t.runner.queue, queuedInput{id: id, msg: message.Message{Role: message.RoleUser, Content: content}})
	t.mu.Unlock()
	t.kick()
	return id, nil
}

// takeInbox hands the queued messages to the running turn (its checkpoint).
func (t *tracker) takeInbox() []message.Message {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []message.Message
	for _, q := range t.runner.queue {
		out = append(out, q.msg)
		t.runner.consumed = append(t.runner.consumed, q.id)
	}
	t.runner.queue = nil
	return out
}

// kick starts a turn with the first queued message, unless a turn runs
// (that one's end kicks again).
func (t *tracker) kick() {
	t.mu.Lock()
	if t.closed || t.runner.starting || len(t.runner.queue) == 0 || t.api.opts.Hub.IsRunning(t.id) {
		t.mu.Unlock()
		return
	}
	in := t.runner.queue[0]
	t.runner.queue = t.runner.queue[1:]
	t.runner.starting = true
	t.mu.Unlock()

	err := t.start(in)
	t.mu.Lock()
	t.runner.starting = false
	if err != nil {
		var busy *session.BusyError
		if errors.As(err, &busy) {
			// A turn began elsewhere meanwhile: ours waits for its end.
			t.runner.queue = append([]queuedInput{in}, t.runner.queue...)
		} else {
			t.api.log.Warn("sessions api: a queued message could not start a turn", "session", t.id, "err", err)
		}
	}
	t.mu.Unlock()
}

// start runs a turn with in as its input, on the session's runner.
func (t *tracker) start(in queuedInput) error {
	req, err := t.api.request(t)
	if err != nil {
		return err
	}
	runner := t.api.runner(t.id)
	_, err = t.api.opts.Hub.Run(t.id, in.msg.Content, func(ctx context.Context, sink event.Sink) (event.End, error) {
		t.mu.Lock() // before the turn stores its input (Committed)
		t.runner.consumed = append(t.runner.consumed, in.id)
		t.mu.Unlock()
		req.Input, req.Sink = in.msg.Content, sink
		_, end, err := runner.Prompt(ctx, req)
		return end, err
	})
	return err
}

// interrupt cancels the running turn at once and drops the queued input;
// it reports whether a turn was running.
func (t *tracker) interrupt() bool {
	t.mu.Lock()
	running := t.turn.running || t.api.opts.Hub.IsRunning(t.id)
	if running {
		t.turn.interrupted = true
		t.runner.interruptedAt = t.api.now()
		t.runner.dropped = nil
		for _, q := range t.runner.queue {
			t.runner.dropped = append(t.runner.dropped, q.id)
		}
		t.runner.queue = nil
	}
	t.mu.Unlock()
	if running {
		t.api.opts.Hub.Cancel(t.id)
	}
	return running
}

// request builds the engine request of a turn of the tracker's session:
// its agent's profile, the model override, client tools and the asker.
func (a *API) request(t *tracker) (engine.Request, error) {
	s, err := a.sessions.settings(t.id)
	if err != nil {
		return engine.Request{}, err
	}
	ag, _ := a.agentOf(s)
	meta, err := a.opts.Store.LoadMeta(t.id)
	if err != nil {
		return engine.Request{}, err
	}
	if err := a.recheckWorkspace(deref(meta.Cwd)); err != nil {
		return engine.Request{}, err
	}
	req := engine.Request{SessionID: t.id, Identity: ag.Instructions, Filter: engine.ToolFilter{Only: ag.Tools},
		MaxIterations: ag.MaxIterations, WorkDir: deref(meta.Cwd), Gate: engine.Asking(t), Inbox: t.takeInbox}
	if req.Provider, req.Model, err = a.modelFor(s, ag); err != nil {
		return engine.Request{}, err
	}
	for _, ct := range s.ClientTools {
		req.Tools.Extra = append(req.Tools.Extra, &clientTool{spec: ct, t: t})
	}
	return req, nil
}

// runner runs session id's turns: Options.Runner, else the engine.
func (a *API) runner(string) engine.Runner {
	if a.opts.Runner != nil {
		return a.opts.Runner
	}
	return a.opts.Engine
}

// agentOf is the session's agent; one deleted since falls back to the
// default (found is false then).
func (a *API) agentOf(s settings) (ag Agent, found bool) {
	ag, err := a.agents.get(s.AgentID)
	if err == nil {
		return ag, true
	}
	ag, _ = a.agents.get(defaultAgentID)
	return ag, false
}

// modelFor is the provider and model a session's turns use: the override,
// else its agent's model; "" leaves it to the session (and the config).
func (a *API) modelFor(s settings, ag Agent) (provider, model string, err error) {
	ref, prov := ag.Model, ag.Provider
	if s.ModelOverride != nil {
		ref, prov = *s.ModelOverride, ""
	}
	if ref == "" {
		return "", "", nil
	}
	if ag.ACPAgent != "" {
		return "", ref, nil // the external agent's own model (its model selector)
	}
	r, err := a.resolve(prov, ref)
	return r[0], r[1], err
}

// resolve reads an agent's model: "provider/model", a model name, or a
// model of the given provider.
func (a *API) resolve(provider, ref string) ([2]string, error) {
	cfg := a.opts.Engine.Config
	if provider != "" {
		r, err := cfg.Resolve(provider, ref)
		if err != nil {
			return [2]string{}, err
		}
		return [2]string{r.ProviderName, r.Model}, nil
	}
	r, err := cfg.ResolveRef(ref)
	if err != nil {
		return [2]string{}, err
	}
	return [2]string{r.ProviderName, r.Model}, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
