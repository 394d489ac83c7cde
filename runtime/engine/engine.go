// Package engine wires configuration, provider, tools, session store and the
// agent loop into one call per turn. Every front end (prompt, chat, ACP,
// serve) runs turns through it, so they behave the same.
package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/openheim/openheim/runtime/agent"
	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/llm/replay"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/permission"
	"github.com/openheim/openheim/runtime/redact"
	"github.com/openheim/openheim/runtime/session"
	"github.com/openheim/openheim/runtime/tools"
)

// Engine runs turns for one configuration.
type Engine struct {
	Config *config.Config
	Store  session.Store
	// Locker keeps one turn per session at a time, in this process and
	// across processes, and fences a turn whose lease was taken over; nil
	// runs unlocked (tests).
	Locker session.Leaser
	Now    func() time.Time
	// MCP offers the configured MCP servers' tools; nil: none.
	MCP ToolSource
	// Memory backs the memory tools (remember, search_memory, ...); nil
	// leaves them out.
	Memory *MemoryOpener
	// ExternalAgent starts the runner of an external ACP agent by name
	// (protocol/acp/host's Runner, set by commands); it lets a subagent
	// profile with acp_agent hand its task over. nil: no external agents.
	ExternalAgent func(name string) (Runner, func())

	// gate keeps each session's "always" permission answers for as long as
	// this process runs (or until Forget).
	gateOnce sync.Once
	gate     *permission.Gate

	redactOnce sync.Once
	redactor   *redact.Redactor
}

// Runner runs turns: the engine itself, or an external ACP agent
// (protocol/acp/host's Runner) behind the same request and event stream.
type Runner interface {
	Prompt(ctx context.Context, req Request) (session.Meta, event.End, error)
}

var _ Runner = (*Engine)(nil)

// UsageError is a mistake in what the caller asked for (unknown session,
// model or provider): the command exits 2 instead of 1.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Request is one prompt.
type Request struct {
	SessionID string // continue this session; "" starts a new one
	Provider  string // "" = the session's, else the default
	Model     string
	Input     []message.Block // the user's message
	Sink      event.Sink
	// Record writes the turn's model replies into a replay cassette at this
	// path; "" falls back to the config's record_dir, if any.
	Record string
	// Started is called once the session is known and before the model is
	// called, with the session's meta as the turn will record it.
	Started func(session.Meta)
	// Asker answers tool calls the config's permission rules say to ask
	// about; nil allows them.
	Asker permission.Asker
	// WorkDir confines the tools; "" means the config's work_dir.
	WorkDir string
	// FS serves the file tools' reads and writes (an editor's buffers over
	// ACP); nil is the local disk.
	FS tools.FS
	// ReadOnly offers only the tools that change nothing (architect mode).
	ReadOnly bool
	// MCP offers the tools of MCP servers added for this session only
	// (ACP session/new mcpServers); nil: none.
	MCP ToolSource
	// Skills to activate (skills/<name>.md), stored with the session; nil
	// keeps the session's (a new session gets the config's default_skills).
	Skills []string
	// Identity replaces system.md for this turn (an agent profile's
	// instructions); "" keeps system.md.
	Identity string
	// AllowedTools, when not nil, offers only the tools of these names
	// (an agent profile's tool list); Extra tools are always offered.
	AllowedTools []string
	// Extra tools for this turn only, run on the caller's side (the
	// sessions API's client-side tools): the permission rules do not apply.
	Extra []tools.Tool
	// MaxIterations overrides max_iterations when positive.
	MaxIterations int
	// Inbox hands over user messages that arrived while the turn ran; the
	// loop takes them in before each model call after the first.
	Inbox func() []message.Message
	// Permit, when set, replaces the config's rules and Asker as the
	// turn's gate (a subagent on an external agent uses its parent's).
	Permit func(ctx context.Context, call message.Block, kind string) bool
}

// Prompt runs one turn and returns the session's meta after it. An error is
// returned only when the turn could not start; how it ended is in End.
func (e *Engine) Prompt(ctx context.Context, req Request) (session.Meta, event.End, error) {
	now := e.now()
	meta, err := e.open(req)
	if err != nil {
		return session.Meta{}, event.End{}, err
	}
	resolved, provider, err := e.providerFor(req, meta)
	if err != nil {
		return session.Meta{}, event.End{}, err
	}
	record := req.Record
	workDir := req.WorkDir
	if workDir == "" {
		workDir = e.Config.WorkDir
	}
	// A turn starting while servers still connect waits for them (bounded
	// by their startup timeouts), so its first model call has their tools.
	e.waitTools(ctx, req.MCP)
	var extra []ToolSource
	if req.MCP != nil {
		extra = append(extra, req.MCP)
	}
	registry, err := e.Tools(workDir, req.FS, req.ReadOnly, extra...)
	if err != nil {
		return session.Meta{}, event.End{}, err
	}

	isNew := meta.ID == ""
	if isNew {
		meta = session.NewMeta(now)
	}
	lease, err := e.Lease(meta.ID)
	if err != nil {
		return session.Meta{}, event.End{}, err
	}
	defer lease.Release()
	ctx, stopWatch := session.LeaseContext(ctx, lease)
	defer stopWatch()
	store := session.Fenced(e.Store, meta.ID, lease)
	// The history is read only once the lock is ours, so the turn continues
	// from what the last holder stored.
	var history []message.Message
	if !isNew {
		conv, err := store.Load(meta.ID)
		if err != nil {
			return session.Meta{}, event.End{}, err
		}
		meta, history = conv.Meta, conv.Messages
	}
	meta.Skills = append([]string{}, e.sessionSkills(req.Skills, isNew, meta.Skills)...)
	system, err := e.system(workDir, req.Identity, meta.Skills)
	if err != nil {
		return session.Meta{}, event.End{}, err
	}
	if meta.Title == nil {
		// The first user message names the session, even when a turn that
		// died before the end of the turn never stored the title.
		meta.Title = session.Str(session.Title(firstUserText(history, req.Input)))
	}
	meta.Model, meta.Provider = session.Str(resolved.Model), session.Str(resolved.ProviderName)
	meta.Cwd = session.Str(workDir)
	meta.UpdatedAt = now.UTC()
	// A new session is stored now; an existing one keeps its meta until the
	// end of the turn, which writes title, model, skills, updated_at and
	// usage together. Rewriting it here too cost a file creation per turn
	// (an inode: 0.1-0.3 ms of CPU on this project's machines), for a title
	// that firstUserText restores anyway should the process die mid-turn.
	if isNew {
		err = store.Create(meta)
	}
	if err != nil {
		return session.Meta{}, event.End{}, err
	}
	if record == "" && e.Config.RecordDir != "" {
		record = filepath.Join(e.Config.RecordDir, meta.ID+"-"+now.UTC().Format("20060102T150405Z")+".json")
	}
	if record != "" {
		if provider, err = replay.NewRecorder(provider, record, e.Redactor()); err != nil {
			return session.Meta{}, event.End{}, err
		}
	}
	if req.Started != nil {
		req.Started(meta)
	}

	permit := e.Permit(meta.ID, req.Asker)
	if len(req.Extra) > 0 {
		// Extra tools run on the caller's side, which asks its own user.
		own := map[string]bool{}
		for _, t := range req.Extra {
			own[t.Spec().Name] = true
		}
		gated := permit
		permit = func(ctx context.Context, call message.Block, kind string) bool {
			return own[call.Name] || gated(ctx, call, kind)
		}
	}
	// Subagents report their tool calls from their own goroutines.
	sink := req.Sink
	if sink == nil {
		sink = event.Discard
	}
	sink = event.Sync(sink) // the one serialiser: a no-op for a Queue
	if err := e.addDelegate(registry, resolved, provider, permit, sink, meta.ID); err != nil {
		return session.Meta{}, event.End{}, err
	}
	if req.AllowedTools != nil {
		registry = registry.Only(req.AllowedTools)
	}
	for _, t := range req.Extra {
		registry.Add(t)
	}
	maxIter := e.Config.MaxIterations
	if req.MaxIterations > 0 {
		maxIter = req.MaxIterations
	}
	a := &agent.Agent{
		Provider:      provider,
		Tools:         registry,
		Model:         resolved.Model,
		System:        system,
		MaxIterations: maxIter,
		MaxTokens:     resolved.Provider.MaxTokens,
		ContextWindow: int64(resolved.Provider.ContextWindow),
		Permit:        permit,
	}
	stored := len(history) // what the store holds: the next append's position
	end := a.Run(ctx, agent.Turn{
		SessionID: meta.ID,
		History:   history,
		Input:     message.Message{Role: message.RoleUser, Content: req.Input},
		Sink:      sink,
		Inbox:     req.Inbox,
		Persist: func(msgs ...message.Message) error {
			if err := store.Append(meta.ID, msgs...); err != nil {
				return err
			}
			sink.Emit(event.Event{SessionID: meta.ID, Kind: event.Committed, Messages: msgs, Index: stored})
			stored += len(msgs)
			return nil
		},
	})

	end = LeaseEnd(end, lease)
	meta.UpdatedAt = e.now().UTC()
	// A title set while the turn ran (a rename on another connection)
	// wins over the one the turn started with.
	if cur, err := store.LoadMeta(meta.ID); err == nil && cur.Title != nil {
		meta.Title = cur.Title
	}
	if end.Iterations > 0 && end.Usage != (message.Usage{}) {
		u := end.Usage
		meta.ContextUsage = &u
	}
	if err := store.SaveMeta(meta); err != nil && end.Err == nil {
		end.Err = fmt.Errorf("saving session meta: %w", err)
	}
	end.Err = e.Redactor().Error(end.Err)
	return meta, end, nil
}

// Permit checks a turn's tool calls against the config's permission rules,
// asking asker; "always" answers are kept per session across turns.
func (e *Engine) Permit(sessionID string, asker permission.Asker) func(context.Context, message.Block, string) bool {
	e.gateOnce.Do(func() { e.gate = permission.NewGate(permission.Rules(e.Config.Permissions), nil) })
	g := e.gate.WithAsker(asker)
	return func(ctx context.Context, call message.Block, kind string) bool {
		ok, err := g.Check(ctx, permission.Request{
			SessionID: sessionID, ToolCallID: call.ID, Tool: call.Name, Kind: kind,
			Title: call.Name, Args: json.RawMessage(call.Arguments),
		})
		if err != nil && ctx.Err() == nil {
			slog.Warn("permission request failed; the tool call is refused", "tool", call.Name, "err", err)
		}
		return ok
	}
}

// Forget drops a session's remembered permission answers (its client went
// away), so a long-running server does not keep them forever.
func (e *Engine) Forget(sessionID string) {
	e.gateOnce.Do(func() { e.gate = permission.NewGate(permission.Rules(e.Config.Permissions), nil) })
	e.gate.Forget(sessionID)
}

// providerFor resolves the turn's provider and model: the request's, else
// the session's, else the config's defaults.
func (e *Engine) providerFor(req Request, meta session.Meta) (*config.Resolved, llm.Provider, error) {
	providerName, model := req.Provider, req.Model
	if providerName == "" && meta.Provider != nil {
		providerName = *meta.Provider
		if model == "" && meta.Model != nil {
			model = *meta.Model
		}
	}
	resolved, err := e.Config.Resolve(providerName, model)
	if err != nil {
		return nil, nil, &UsageError{err}
	}
	provider, err := NewProvider(resolved)
	if err != nil {
		return nil, nil, &UsageError{err}
	}
	return resolved, provider, nil
}

// open reads the meta of the session to continue, if any.
func (e *Engine) open(req Request) (session.Meta, error) {
	if req.SessionID == "" {
		return session.Meta{}, nil
	}
	meta, err := e.Store.LoadMeta(req.SessionID)
	if errors.Is(err, session.ErrNotFound) || errors.Is(err, session.ErrInvalidID) {
		return session.Meta{}, &UsageError{err}
	}
	if err != nil {
		return session.Meta{}, err
	}
	return *meta, nil
}

func (e *Engine) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

// firstUserText is the text of the session's first user message, or of
// input when there is none yet.
func firstUserText(history []message.Message, input []message.Block) string {
	for _, m := range history {
		if m.Role == message.RoleUser {
			if t := textOf(m.Content); t != "" {
				return t
			}
		}
	}
	return textOf(input)
}

func textOf(blocks []message.Block) string {
	for _, b := range blocks {
		if b.Type == message.TypeText {
			return b.Text
		}
	}
	return ""
}
