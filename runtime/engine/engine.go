// Package engine wires configuration, provider, tools, session store and the
// agent loop into one call per turn. Every front end (prompt, chat, ACP,
// serve) runs turns through it, so they behave the same.
package engine

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/permission"
	"github.com/openheim/openheim/runtime/redact"
	"github.com/openheim/openheim/runtime/session"
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

	// rules keep each session's "always" permission answers for as long as
	// this process runs (or until Forget).
	gateOnce sync.Once
	rules    *permission.Gate

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
func (e *Engine) open(id string) (session.Meta, error) {
	if id == "" {
		return session.Meta{}, nil
	}
	meta, err := e.Store.LoadMeta(id)
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
