package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/openheim/openheim/runtime/agent"
	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/llm/replay"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
	"github.com/openheim/openheim/runtime/tools"
)

// A turn runs in stages, one function each: open the session (open),
// resolve its model (providerFor) and tools (offer), lease it and load its
// history (hold), settle the system prompt and the meta the turn records
// (prepare), bind the tools to the turn (arm), run the loop (run) and
// store the meta (finish). Compact shares open, providerFor, hold and save.

// turn is one prompt as its stages build it up.
type turn struct {
	*held
	req      Request
	now      time.Time
	workDir  string
	model    *config.Resolved
	provider llm.Provider
	tools    *tools.Registry
	system   string
	permit   Permit
	sink     event.Sink
	// flushChunks lets out the chunk text sink holds back (redactChunks).
	flushChunks func()
}

// Prompt runs one turn and returns the session's meta after it. An error is
// returned only when the turn could not start; how it ended is in End.
func (e *Engine) Prompt(ctx context.Context, req Request) (session.Meta, event.End, error) {
	t := &turn{req: req, now: e.now(), workDir: req.WorkDir}
	if t.workDir == "" {
		t.workDir = e.Config.WorkDir
	}
	meta, err := e.open(req.SessionID)
	if err == nil {
		t.model, t.provider, err = e.providerFor(req, meta)
	}
	if err == nil {
		t.tools, err = e.offer(ctx, req, t.workDir)
	}
	if err != nil {
		return session.Meta{}, event.End{}, err
	}
	isNew := meta.ID == ""
	if isNew {
		meta = session.NewMeta(t.now)
	}
	ctx, t.held, err = e.hold(ctx, meta, isNew)
	if err != nil {
		return session.Meta{}, event.End{}, err
	}
	defer t.release()
	if err := e.prepare(t); err != nil {
		return session.Meta{}, event.End{}, err
	}
	if err := e.arm(t); err != nil {
		return session.Meta{}, event.End{}, err
	}
	ended := e.run(ctx, t)
	t.flushChunks()
	meta, end := e.finish(t, ended)
	return meta, end, nil
}

// offer returns the tools of a turn in workDir, the filter's ReadOnly
// applied. A turn starting while MCP servers still connect waits for them
// (bounded by their startup timeouts), so its first model call has their
// tools.
func (e *Engine) offer(ctx context.Context, req Request, workDir string) (*tools.Registry, error) {
	e.waitTools(ctx, req.Tools.MCP)
	return e.Tools(workDir, req.FS, req.Filter.ReadOnly, req.Tools.MCP)
}

// held is a session leased for one turn.
type held struct {
	meta    session.Meta
	isNew   bool
	history []message.Message // what the session held when the lease was taken
	lease   session.Lease
	store   session.Store // fenced: its writes fail once the lease is lost
	release func()        // stops watching the lease and releases it
}

// hold leases meta's session and, unless it is new, loads it. The history
// is read only once the lease is ours, so the turn continues from what the
// last holder stored. The context returned ends when the lease is lost.
func (e *Engine) hold(ctx context.Context, meta session.Meta, isNew bool) (context.Context, *held, error) {
	lease, err := e.Lease(meta.ID)
	if err != nil {
		return ctx, nil, err
	}
	ctx, stopWatch := session.LeaseContext(ctx, lease)
	h := &held{meta: meta, isNew: isNew, lease: lease, store: session.Fenced(e.Store, meta.ID, lease),
		release: func() { stopWatch(); lease.Release() }}
	if !isNew {
		conv, err := h.store.Load(meta.ID)
		if err != nil {
			h.release()
			return ctx, nil, err
		}
		h.meta, h.history = conv.Meta, conv.Messages
	}
	return ctx, h, nil
}

// prepare settles the session's skills and the system prompt, and the meta
// the turn records (title, model, provider, cwd); it stores a new session
// and wraps the provider in a recorder when the turn is recorded.
func (e *Engine) prepare(t *turn) error {
	meta := &t.meta
	meta.Skills = append([]string{}, e.sessionSkills(t.req.Skills, t.isNew, meta.Skills)...)
	system, err := e.system(t.workDir, t.req.Identity, meta.Skills)
	if err != nil {
		return err
	}
	t.system = system
	if meta.Title == nil {
		// The first user message names the session, even when a turn that
		// died before the end of the turn never stored the title.
		meta.Title = session.Str(session.Title(firstUserText(t.history, t.req.Input)))
	}
	meta.Model, meta.Provider = session.Str(t.model.Model), session.Str(t.model.ProviderName)
	meta.Cwd = session.Str(t.workDir)
	meta.UpdatedAt = t.now.UTC()
	// A new session is stored now; an existing one keeps its meta until the
	// end of the turn, which writes title, model, skills, updated_at and
	// usage together. Rewriting it here too cost a file creation per turn
	// (an inode: 0.1-0.3 ms of CPU on this project's machines), for a title
	// that firstUserText restores anyway should the process die mid-turn.
	if t.isNew {
		if err := t.store.Create(*meta); err != nil {
			return err
		}
	}
	record := t.req.Record
	if record == "" && e.Config.RecordDir != "" {
		record = filepath.Join(e.Config.RecordDir, meta.ID+"-"+t.now.UTC().Format("20060102T150405Z")+".json")
	}
	if record != "" {
		if t.provider, err = replay.NewRecorder(t.provider, record, e.Redactor()); err != nil {
			return err
		}
	}
	return nil
}

// arm binds the tools to the turn: its gate, its stream (made safe for the
// subagents, which report from their own goroutines), delegate_task, the
// filter's Only and the Extra tools, which no filter removes.
func (e *Engine) arm(t *turn) error {
	t.permit = e.turnPermit(t.meta.ID, t.req)
	t.sink = t.req.Sink
	if t.sink == nil {
		t.sink = event.Discard
	}
	t.sink, t.flushChunks = e.RedactChunks(event.Sync(t.sink))
	if err := e.addDelegate(t.tools, t.model, t.provider, t.permit, t.sink, t.meta.ID, t.workDir); err != nil {
		return err
	}
	if t.req.Filter.Only != nil {
		t.tools = t.tools.Only(t.req.Filter.Only)
	}
	for _, x := range t.req.Tools.Extra {
		t.tools.Add(x)
	}
	return nil
}

// run opens the turn's stream and runs the loop, each step committed to the
// store and announced (event.Committed) with its place in the history.
func (e *Engine) run(ctx context.Context, t *turn) event.End {
	e.announce(t.sink, t.meta, t.req.Tools.MCP)
	maxIter := e.Config.MaxIterations
	if t.req.MaxIterations > 0 {
		maxIter = t.req.MaxIterations
	}
	a := &agent.Agent{
		Provider:      t.provider,
		Tools:         t.tools,
		Model:         t.model.Model,
		System:        t.system,
		MaxIterations: maxIter,
		MaxTokens:     t.model.Provider.MaxTokens,
		ContextWindow: int64(t.model.Provider.ContextWindow),
		Permit:        t.permit,
	}
	id, sink := t.meta.ID, t.sink
	stored := len(t.history) // what the store holds: the next append's position
	return a.Run(ctx, agent.Turn{
		SessionID: id,
		History:   t.history,
		Input:     message.Message{Role: message.RoleUser, Content: t.req.Input},
		Sink:      sink,
		Inbox:     t.req.Inbox,
		Persist: func(msgs ...message.Message) error {
			if err := t.store.Append(id, msgs...); err != nil {
				return err
			}
			sink.Emit(event.Event{SessionID: id, Kind: event.Committed, Messages: msgs, Index: stored})
			stored += len(msgs)
			return nil
		},
	})
}

// announce opens a turn's stream: the session as the turn records it, then
// every MCP server whose tools the turn lacks because it could not be
// connected (the turn waited for them: their status is final).
func (e *Engine) announce(sink event.Sink, meta session.Meta, extra ToolSource) {
	sink.Emit(meta.InfoEvent())
	for _, src := range []ToolSource{e.MCP, extra} {
		if src == nil {
			continue
		}
		for _, st := range src.Status() {
			if st.Error != nil {
				sink.Emit(event.Event{SessionID: meta.ID, Kind: event.MCPServerFailed, Server: &st})
			}
		}
	}
}

// finish stores the session's meta after the turn, with the context usage
// of its last model call, and makes a lost lease the turn's error.
func (e *Engine) finish(t *turn, end event.End) (session.Meta, event.End) {
	end = LeaseEnd(end, t.lease)
	if end.Iterations > 0 && end.Usage != (message.Usage{}) {
		u := end.Usage
		t.meta.ContextUsage = &u
	}
	t.meta.AddUsage(t.model.ProviderName+"/"+t.model.Model, end.Total)
	meta, err := e.save(t.held)
	if err != nil && end.Err == nil {
		end.Err = fmt.Errorf("saving session meta: %w", err)
	}
	end.Err = e.Redactor().Error(end.Err)
	return meta, end
}

// save stores a held session's meta as its turn ends: updated now, keeping
// a title set while the turn ran (a rename on another connection).
func (e *Engine) save(h *held) (session.Meta, error) {
	h.meta.UpdatedAt = e.now().UTC()
	if cur, err := h.store.LoadMeta(h.meta.ID); err == nil && cur.Title != nil {
		h.meta.Title = cur.Title
	}
	return h.meta, h.store.SaveMeta(h.meta)
}
