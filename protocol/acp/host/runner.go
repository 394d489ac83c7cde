package host

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/permission"
	"github.com/openheim/openheim/runtime/session"
)

// Runner runs openheim turns on an external ACP agent: the same
// engine.Request in, the same event stream out, the same session store (a
// session remembers its agent and the agent's session id, so a later
// --session reattaches). Commands use it where they would use the engine.
type Runner struct {
	Engine  *engine.Engine // config, store, locker and permission gate
	Agent   string         // the [acp_agents] name (or a preset)
	Version string         // reported as clientInfo.version
	Log     *slog.Logger
	// CancelGrace is how long a cancelled turn may take to end before the
	// agent's process group is killed (default 10 s).
	CancelGrace time.Duration
	Hooks       Hooks
	// Initial is asked of every session this Runner opens, over the
	// profile's settings ([acp_agents.X] model, mode, effort, config);
	// unlike those, a setting here the agent refuses fails the turn
	// (prompt --mode, --model; chat's choices before its first turn).
	Initial InitialConfig

	// Tests only: an in-process agent instead of the configured command,
	// and the environment a real agent gets instead of openheim's.
	transport func() *Transport
	environ   []string

	queues queues // the sessions' running turns and waiting prompts

	mu   sync.Mutex
	host *Host
	// prompt0 is the process's system prompt (Projection.ProcessPrompt);
	// reports what each agent session's setup did.
	prompt0 SystemPrompt
	reports map[string]InitialConfigReport
	asks    map[string]func(context.Context, acp.RequestPermissionRequest) acp.RequestPermissionResponse // agent session -> its turn's gate
	openIDs map[string]bool                                                                              // agent sessions open on this host
}

var _ engine.Runner = (*Runner)(nil)

// Host starts the agent on first use.
func (r *Runner) Host(ctx context.Context) (*Host, error) { return r.hostFor(ctx, "") }

// hostFor is Host for a turn whose system prompt adds identity: an agent
// that takes its system prompt only when it starts (Codex) is started with
// it, and cannot then run a session with another one.
func (r *Runner) hostFor(ctx context.Context, identity string) (*Host, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.host != nil {
		if r.host.opts.Projection.ProcessPrompt && identity != "" && identity != r.prompt0.Text {
			return nil, fmt.Errorf("acp agent %s takes its system prompt when it starts, and runs with another one here; "+
				"start another openheim for this profile", r.Agent)
		}
		return r.host, nil
	}
	cfg := r.Engine.Config
	a, err := cfg.ACPAgentNamed(r.Agent)
	if err != nil {
		return nil, &engine.UsageError{Err: err}
	}
	log := r.Log
	if log == nil {
		log = slog.Default()
	}
	spec := AgentSpec{Name: r.Agent, Command: a.Command, Args: a.Args, ExtraArgs: a.ExtraArgs, Env: a.Env, Cwd: a.Cwd, Kind: a.AgentKind()}
	r.prompt0 = ProfilePrompt(a.ACPProfile)
	if identity != "" {
		r.prompt0 = SystemPrompt{Text: identity}
	}
	opts := Options{ClientInfo: acp.Implementation{Name: "openheim", Version: r.Version}, WorkDir: cfg.WorkDir, Log: log,
		Permission: r.permission, Hooks: r.Hooks, AllowShell: cfg.AllowShell, Environ: r.environ,
		CaptureContent: a.CaptureContent, Redact: cfg.Redactor(),
		Projection: Project(a.AgentKind(), Bounds{WorkDir: cfg.WorkDir, AllowShell: cfg.AllowShell, Profile: a.ACPProfile,
			Rules: permission.Rules(cfg.Permissions), Prompt: r.prompt0})}
	if r.transport != nil {
		opts.Transport = r.transport()
	}
	h, err := Start(ctx, spec, opts)
	if err != nil {
		return nil, err
	}
	r.host, r.asks, r.openIDs = h, map[string]func(context.Context, acp.RequestPermissionRequest) acp.RequestPermissionResponse{}, map[string]bool{}
	return h, nil
}

// Close stops the agent.
func (r *Runner) Close() error {
	r.mu.Lock()
	h := r.host
	r.host = nil
	r.mu.Unlock()
	if h == nil {
		return nil
	}
	return h.Close()
}

// permission routes an agent's question to the gate of the turn it
// belongs to.
func (r *Runner) permission(ctx context.Context, q acp.RequestPermissionRequest) acp.RequestPermissionResponse {
	r.mu.Lock()
	ask := r.asks[q.SessionID]
	r.mu.Unlock()
	if ask == nil {
		return acp.RequestPermissionResponse{Outcome: acp.PermissionOutcome{Outcome: acp.OutcomeCancelled}}
	}
	return ask(ctx, q)
}

// mcpServers are the config's MCP servers in ACP's wire shape.
func mcpServers(cfg *config.Config) ([]json.RawMessage, []string) {
	var out []json.RawMessage
	var names []string
	for _, name := range slices.Sorted(maps.Keys(cfg.MCPServers)) {
		s := cfg.MCPServers[name]
		var v any
		if s.URL != "" {
			headers := []map[string]string{}
			for _, k := range slices.Sorted(maps.Keys(s.Headers)) {
				headers = append(headers, map[string]string{"name": k, "value": s.Headers[k]})
			}
			v = map[string]any{"type": "http", "name": name, "url": s.URL, "headers": headers}
		} else {
			env := []map[string]string{}
			for _, k := range slices.Sorted(maps.Keys(s.Env)) {
				env = append(env, map[string]string{"name": k, "value": s.Env[k]})
			}
			args := s.Args
			if args == nil {
				args = []string{}
			}
			v = map[string]any{"name": name, "command": s.Command, "args": args, "env": env}
		}
		raw, _ := json.Marshal(v)
		out = append(out, raw)
		names = append(names, name)
	}
	return out, names
}

// prompt runs one turn of req on the agent: the session is found or
// made, leased, bound to a session on the agent, and the agent's turn is
// forwarded to req.Sink and kept in the store.
func (r *Runner) prompt(ctx context.Context, req engine.Request) (session.Meta, event.End, error) {
	meta, isNew, err := r.sessionMeta(req.SessionID)
	if err != nil {
		return session.Meta{}, event.End{}, err
	}
	h, err := r.hostFor(ctx, req.Identity)
	if err != nil {
		return session.Meta{}, event.End{}, err
	}
	lease, err := r.Engine.Lease(meta.ID)
	if err != nil {
		return session.Meta{}, event.End{}, err
	}
	defer lease.Release()
	ctx, stopWatch := session.LeaseContext(ctx, lease)
	defer stopWatch()
	store := session.Fenced(r.Engine.Store, meta.ID, lease)
	workDir := req.WorkDir
	if workDir == "" {
		workDir = r.Engine.Config.WorkDir
	}
	if err := checkPrompt(h, req.Input); err != nil {
		return session.Meta{}, event.End{}, err
	}
	cwd, stored, err := r.bind(ctx, h, &meta, isNew, req, workDir)
	if err != nil {
		return session.Meta{}, event.End{}, err
	}
	sink := req.Sink
	if sink == nil {
		sink = event.Discard
	}
	sink, flush := r.Engine.RedactChunks(sink)
	defer flush()
	sink.Emit(meta.InfoEvent()) // the stream opens with the session, as the engine's does
	tr := &transcript{sink: sink, store: store, id: meta.ID, next: stored}
	if err := tr.commit(message.Message{Role: message.RoleUser, Content: req.Input}); err != nil {
		return session.Meta{}, event.End{}, err
	}
	r.setAsk(meta.ACP.SessionID, r.gate(r.Engine.Permit(meta.ID, req.Gate), workDir, cwd))
	defer r.setAsk(meta.ACP.SessionID, nil)

	end := r.run(ctx, h, meta.ACP.SessionID, req.Input, tr)
	return r.finish(meta, end, tr, lease, store)
}

// sessionMeta loads the session req names, which must be one this agent
// ran, or makes a new one (isNew; stored by bind).
func (r *Runner) sessionMeta(id string) (meta session.Meta, isNew bool, err error) {
	if id == "" {
		return session.NewMeta(time.Now()), true, nil
	}
	m, err := r.Engine.Store.LoadMeta(id)
	if err != nil {
		return session.Meta{}, false, &engine.UsageError{Err: err}
	}
	if m.ACP == nil || m.ACP.Agent != r.Agent {
		return session.Meta{}, false, &engine.UsageError{Err: fmt.Errorf("session %s was not run by ACP agent %s", m.ID, r.Agent)}
	}
	return *m, false, nil
}

// bind gives the session its session on the agent: a new one (recorded in
// meta, which is then stored) or the one meta names, reattached unless
// this host has it open. It returns the agent session's cwd and how many
// messages the store holds already.
func (r *Runner) bind(ctx context.Context, h *Host, meta *session.Meta, isNew bool, req engine.Request, workDir string) (cwd string, stored int, err error) {
	e := r.Engine
	servers, names := r.serversFor(h)
	opts := r.sessionOptions(workDir, servers, req.Identity)
	if !isNew && meta.ACP.SessionID == "" {
		// Bound to the agent when it was made (the server's sessions):
		// its session on the agent starts with the first turn.
		return r.bindLate(ctx, h, meta, req, opts, names)
	}
	if isNew {
		ext, err := h.NewSession(ctx, opts)
		if err != nil {
			return "", 0, err
		}
		if err := r.configure(ctx, h, ext, req); err != nil {
			r.discard(ctx, h, ext)
			return "", 0, err
		}
		meta.ACP = &session.ACPBinding{Agent: r.Agent, SessionID: ext, Cwd: workDir, MCPServers: names}
		meta.Title = session.Str(session.Title(message.Message{Content: req.Input}.JoinText()))
		meta.Provider, meta.Model, meta.Cwd = session.Str("acp"), session.Str(r.Agent), session.Str(workDir)
		if err := e.Store.Create(*meta); err != nil {
			return "", 0, err
		}
	} else {
		if n, err := e.Store.Load(meta.ID); err == nil {
			stored = len(n.Messages)
		}
		if !r.isOpen(meta.ACP.SessionID) {
			opts.Cwd = meta.ACP.Cwd
			if err := h.Reattach(ctx, meta.ACP.SessionID, opts); err != nil {
				return "", 0, fmt.Errorf("reattaching to %s session %s: %w", r.Agent, meta.ACP.SessionID, err)
			}
			if err := r.configure(ctx, h, meta.ACP.SessionID, req); err != nil {
				return "", 0, err
			}
		} else if err := r.configureTurn(ctx, h, meta.ACP.SessionID, req); err != nil {
			return "", 0, err
		}
	}
	r.markOpen(meta.ACP.SessionID)
	return opts.Cwd, stored, nil
}

// finish stores what is left of the turn and the session's meta (keeping
// a title set meanwhile); a failure there, or a lost lease, is the turn's
// error unless it has one.
func (r *Runner) finish(meta session.Meta, end event.End, tr *transcript, lease session.Lease, store session.Store) (session.Meta, event.End, error) {
	if err := tr.flush(true); err != nil && end.Err == nil {
		end.Err = err
	}
	end = engine.LeaseEnd(end, lease)
	meta.UpdatedAt = time.Now().UTC()
	if cur, err := r.Engine.Store.LoadMeta(meta.ID); err == nil && cur.Title != nil {
		meta.Title = cur.Title
	}
	r.rememberMode(&meta)
	if err := store.SaveMeta(meta); err != nil && end.Err == nil {
		end.Err = err
	}
	return meta, end, nil
}

// run prompts the agent and forwards its turn; a cancelled turn the agent
// does not end within the grace period gets its process group killed.
func (r *Runner) run(ctx context.Context, h *Host, ext string, input []message.Block, tr *transcript) event.End {
	// Cancelling the turn's context sends session/cancel (Prompt's
	// AfterFunc): the answer cap's way to stop the agent.
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	limit := newAnswerCap(r.Engine.Config, stop)
	end := r.runTurn(ctx, h, ext, input, tr, limit)
	if limit.over {
		// Cut short as a model's answer is at the cap, whatever the agent
		// made of the cancel.
		end.StopReason, end.Err = event.StopMaxTokens, nil
		log := r.Log
		if log == nil {
			log = slog.Default()
		}
		log.Warn("acp host: the agent's answer passed max_answer_bytes: the turn was cancelled", "agent", r.Agent, "max_answer_bytes", limit.limit)
	}
	return end
}

// runTurn runs one prompt on the agent, folding its events into tr (within
// limit) until the turn completes, the agent is killed after a cancel that
// it did not honour in time, or it dies.
func (r *Runner) runTurn(ctx context.Context, h *Host, ext string, input []message.Block, tr *transcript, limit *answerCap) event.End {
	start := time.Now()
	turn, err := h.Prompt(ctx, ext, acp.PromptBlocks(input))
	if err != nil {
		return event.End{StopReason: event.StopEndTurn, Err: err}
	}
	grace := r.CancelGrace
	if grace <= 0 {
		grace = 10 * time.Second
	}
	events := turn.Events
	var killed bool
	var deadline <-chan time.Time
	cancelled := ctx.Done()
	for events != nil {
		select {
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if ev, keep := limit.take(ev); keep {
				tr.add(ev)
			}
		case <-cancelled:
			// session/cancel went out (Prompt's AfterFunc); the agent has
			// the grace period to end the turn.
			cancelled, deadline = nil, time.After(grace)
		case <-deadline:
			killed = true
			h.Kill()
			go func(evs <-chan event.Event) { // let the turn's goroutine finish
				for range evs {
				}
			}(events)
			events = nil
		}
	}
	end := event.End{Iterations: 1, Duration: time.Since(start)}
	if killed {
		end.StopReason = event.StopCancelled
		r.Close()
		return end
	}
	res := <-turn.Completion
	end.StopReason = res.Completion.StopReason
	if u := res.Completion.Usage; u != nil {
		end.Usage = message.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens}
		if u.CachedReadTokens != nil {
			end.Usage.CacheReadTokens = *u.CachedReadTokens
		}
		if u.CachedWriteTokens != nil {
			end.Usage.CacheCreationTokens = *u.CachedWriteTokens
		}
		if u.ThoughtTokens != nil {
			end.Usage.ThoughtTokens = *u.ThoughtTokens
		}
	}
	if res.Err != nil {
		if ctx.Err() != nil {
			end.StopReason = event.StopCancelled
		} else {
			end.StopReason, end.Err = event.StopEndTurn, res.Err
		}
	}
	if end.StopReason == "" {
		end.StopReason = event.StopEndTurn
	}
	return end
}

// gate answers the agent's permission requests with the turn's gate
// (openheim's rules and the turn's asker, or a parent turn's), choosing the agent's option of the matching kind
// (allow once before allow always, so the agent keeps asking). A request
// is judged by what it touches (reachOf: paths against the turn's work
// directory root, a command as execute) through the one gate; the rules
// see the call under its kind (read, edit, execute, ...), the kind the
// reach gives it.
func (r *Runner) gate(permit engine.Permit, root, cwd string) func(context.Context, acp.RequestPermissionRequest) acp.RequestPermissionResponse {
	shell := r.Engine.Config.AllowShell
	return func(ctx context.Context, q acp.RequestPermissionRequest) acp.RequestPermissionResponse {
		reach := reachOf(q.ToolCall, cwd)
		reach.Root, reach.Shell = root, shell
		kind := q.ToolCall.Kind
		if kind == "" {
			kind = "other"
		}
		kind = reach.Kind(kind)
		args := string(q.ToolCall.RawInput)
		if args == "" {
			args = "{}"
		}
		ok := permit(permission.WithReach(ctx, reach), message.Block{ID: q.ToolCall.ToolCallID, Name: kind, Arguments: args}, kind)
		return pickOption(q.Options, ok)
	}
}

// pickOption answers with the agent's option of the decided kind, or
// cancels when it offers none.
func pickOption(options []acp.PermissionOption, ok bool) acp.RequestPermissionResponse {
	want := []string{acp.PermissionAllowOnce, acp.PermissionAllowAlways}
	if !ok {
		want = []string{acp.PermissionRejectOnce, acp.PermissionRejectAlways}
	}
	for _, k := range want {
		for _, o := range options {
			if o.Kind == k {
				return acp.RequestPermissionResponse{Outcome: acp.PermissionOutcome{Outcome: acp.OutcomeSelected, OptionID: o.OptionID}}
			}
		}
	}
	return acp.RequestPermissionResponse{Outcome: acp.PermissionOutcome{Outcome: acp.OutcomeCancelled}}
}

func (r *Runner) setAsk(ext string, f func(context.Context, acp.RequestPermissionRequest) acp.RequestPermissionResponse) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if f == nil {
		delete(r.asks, ext)
	} else {
		r.asks[ext] = f
	}
}

func (r *Runner) isOpen(ext string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.openIDs[ext]
}

func (r *Runner) markOpen(ext string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.openIDs[ext] = true
}
