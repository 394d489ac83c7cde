package sessionsapi

import (
	"context"
	"errors"
	"time"

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
	kind          int      // of the run this tracker starts next (runTurn...)
	interruptedAt any      // unix seconds of the last interrupt, or nil
	dropped       []string // queued ids an interrupt dropped
	// stored are closed when the input of that queued id is stored, or
	// will not be (its turn ended or could not start): awaitStored.
	stored map[string]chan struct{}
	// recording is the items a run is storing, off the queue but perhaps
	// not yet in the session's items: the last of them is what the next
	// queued item follows (record). recordingRun numbers that run, so
	// only its own end forgets them.
	recording    []message.Message
	recordingRun int
}

type queuedInput struct {
	id  string
	msg message.Message
	// record: an item stored as it is (inputs.go), not a turn's input.
	record bool
}

// Kinds of the run a tracker starts (runnerState.kind): what the stream
// makes of the hub's TurnStart.
const (
	runTurn    = iota // a turn: a response
	runRecord         // queued items stored as they are: no response
	runCompact        // a compaction: a response, announced as one
)

// consumedID is the queued id of the input just stored, or the item's own
// id for input that was never queued here (a prompt on /ws).
func (r *runnerState) consumedID(itemID string) string {
	if len(r.consumed) == 0 {
		return itemID
	}
	id := r.consumed[0]
	r.consumed = r.consumed[1:]
	r.settle(id)
	return id
}

// settle wakes whoever awaits queued id's storing.
func (r *runnerState) settle(id string) {
	if ch := r.stored[id]; ch != nil {
		close(ch)
		delete(r.stored, id)
	}
}

// settleAll wakes every waiter: a turn ended, what it did not store it
// will not.
func (r *runnerState) settleAll() {
	for id := range r.stored {
		r.settle(id)
	}
}

// awaitStored waits until queued input id is stored, its turn ended
// without storing it, or max passed.
func (t *tracker) awaitStored(id string, max time.Duration) {
	t.mu.Lock()
	ch := t.runner.stored[id]
	t.mu.Unlock()
	if ch == nil {
		return // settled already
	}
	timer := time.NewTimer(max)
	defer timer.Stop()
	select {
	case <-ch:
	case <-timer.C:
	}
}

// post queues a user message; it starts a turn if none is running.
func (t *tracker) post(content []message.Block) (string, error) {
	t.mu.Lock()
	if err := t.acceptingLocked(); err != nil {
		t.mu.Unlock()
		return "", err
	}
	id := t.enqueueLocked(queuedInput{msg: message.Message{Role: message.RoleUser, Content: content}})
	t.mu.Unlock()
	t.kick()
	return id, nil
}

// acceptingLocked refuses input to a tracker that cannot take it. mu is
// held.
func (t *tracker) acceptingLocked() error {
	switch {
	case t.retired:
		return errRetired
	case t.closed:
		return notFound("session %q not found", t.conv)
	case t.failed != "":
		return failedError(t.failed)
	}
	return nil
}

// enqueueLocked queues in under a new queued id. mu is held.
func (t *tracker) enqueueLocked(in queuedInput) string {
	in.id = ids.New("qi_")
	t.runner.queue = append(t.runner.queue, in)
	if t.runner.stored == nil {
		t.runner.stored = map[string]chan struct{}{}
	}
	t.runner.stored[in.id] = make(chan struct{})
	return in.id
}

// takeInbox hands the queued messages to the running turn (its
// checkpoint), up to the first queued item to record: that waits for the
// turn's end, and what was posted after it waits behind it.
func (t *tracker) takeInbox() []message.Message {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []message.Message
	n := 0
	for _, q := range t.runner.queue {
		if q.record {
			break
		}
		out = append(out, q.msg)
		t.runner.consumed = append(t.runner.consumed, q.id)
		n++
	}
	t.runner.queue = t.runner.queue[n:]
	return out
}

// kick starts a turn with the first queued message, or stores the queued
// items to record at the head of the queue, unless a turn runs (that
// one's end kicks again).
func (t *tracker) kick() {
	t.mu.Lock()
	if t.closed || t.failed != "" || t.runner.starting || len(t.runner.queue) == 0 || t.api.opts.Hub.IsRunning(t.id) {
		t.mu.Unlock()
		return
	}
	n := 1
	if t.runner.queue[0].record {
		for n < len(t.runner.queue) && t.runner.queue[n].record {
			n++
		}
	}
	batch := append([]queuedInput(nil), t.runner.queue[:n]...)
	t.runner.queue = t.runner.queue[n:]
	t.runner.starting = true
	t.runner.kind = runTurn
	if batch[0].record {
		t.runner.kind = runRecord
		t.runner.recording, t.runner.recordingRun = nil, t.runner.recordingRun+1
		for _, in := range batch {
			t.runner.recording = append(t.runner.recording, in.msg)
		}
	}
	t.mu.Unlock()

	var err error
	if batch[0].record {
		err = t.startRecord(batch)
	} else {
		err = t.start(batch[0])
	}
	t.mu.Lock()
	t.runner.starting = false
	if err != nil {
		t.runner.recording = nil
		t.notStarted(batch, err)
	}
	t.mu.Unlock()
}

// notStarted puts back input whose run could not start because a turn
// began elsewhere meanwhile (it waits for that one's end); any other
// refusal drops it, and the stream says so. mu is held.
func (t *tracker) notStarted(batch []queuedInput, err error) {
	var busy *session.BusyError
	if errors.As(err, &busy) {
		t.runner.queue = append(batch, t.runner.queue...)
		return
	}
	t.api.log.Warn("sessions api: queued input could not start a turn", "session", t.id, "err", err)
	for _, in := range batch {
		t.runner.settle(in.id)
		t.emitSSE("response.error", map[string]any{"code": "turn_not_started", "param": nil, "queued_item_id": in.id,
			"message": "the queued input could not start a turn: " + err.Error()})
	}
}

// startRecord stores queued items as they are, in a run of their own.
func (t *tracker) startRecord(batch []queuedInput) error {
	msgs := make([]message.Message, len(batch))
	for i, in := range batch {
		msgs[i] = in.msg
	}
	_, err := t.api.opts.Hub.Run(t.id, nil, func(ctx context.Context, sink event.Sink) (event.End, error) {
		t.mu.Lock()
		for _, in := range batch {
			t.runner.consumed = append(t.runner.consumed, in.id)
		}
		t.mu.Unlock()
		return t.api.opts.Engine.Record(ctx, engine.Request{SessionID: t.id, Sink: sink}, msgs)
	})
	return err
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
			t.runner.settle(q.id)
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
