package engine

import (
	"sync"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/redact"
)

// Redactor masks the config's secrets (config.Config.Secrets) in text the
// engine and its front ends send out: turn errors, cassettes, MCP status,
// API answers. It is built on first use and kept; nil when the config holds
// no secrets.
func (e *Engine) Redactor() *redact.Redactor {
	if e == nil {
		return nil
	}
	e.redactOnce.Do(func() {
		if e.Config != nil {
			e.redactor = e.Config.Redactor()
		}
	})
	return e.redactor
}

// chunkRedactor passes a turn's events on with the text of its message and
// thought chunks run through a redact.Stream (one per session and kind:
// subagents share the turn's sink), so a secret the model streams in two
// chunks is masked as one whose chunk carried it whole is by the front
// ends. Any other event of a session first lets out what its streams hold
// back, so the order of the session's events stays as the loop made it.
type chunkRedactor struct {
	mu      sync.Mutex
	red     *redact.Redactor
	next    event.Sink
	streams map[chunkKey]*chunkStream
}

type chunkKey struct {
	session string
	kind    event.Kind
}

type chunkStream struct {
	s    *redact.Stream
	last event.Event // the chunk event whose text is held back (its other fields)
}

// RedactChunks returns sink with the text of message and thought chunks
// redacted across their boundaries (the config's secrets), and the func
// that lets out what is held back, for the end of the turn; sink itself
// when the config holds no secrets. Every runner of turns streams through
// one: the engine's and the external agents'.
func (e *Engine) RedactChunks(sink event.Sink) (event.Sink, func()) {
	red := e.Redactor()
	if red.Empty() {
		return sink, func() {}
	}
	c := &chunkRedactor{red: red, next: sink, streams: map[chunkKey]*chunkStream{}}
	return c, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		for k := range c.streams {
			c.flush(k)
		}
	}
}

// Emit implements event.Sink.
func (c *chunkRedactor) Emit(e event.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	chunk := (e.Kind == event.AgentMessageChunk || e.Kind == event.AgentThoughtChunk) &&
		e.Content != nil && e.Content.Type == message.TypeText
	for _, k := range []event.Kind{event.AgentThoughtChunk, event.AgentMessageChunk} {
		if !chunk || k != e.Kind {
			c.flush(chunkKey{e.SessionID, k})
		}
	}
	if !chunk {
		c.next.Emit(e)
		return
	}
	k := chunkKey{e.SessionID, e.Kind}
	st := c.streams[k]
	if st == nil {
		st = &chunkStream{s: c.red.Stream()}
		c.streams[k] = st
	}
	st.last = e
	if out := st.s.Push(e.Content.Text); out != "" {
		c.next.Emit(withText(e, out))
	}
}

// flush lets out what stream k holds back, as a chunk like its last one.
func (c *chunkRedactor) flush(k chunkKey) {
	st := c.streams[k]
	if st == nil {
		return
	}
	delete(c.streams, k)
	if out := st.s.Flush(); out != "" {
		c.next.Emit(withText(st.last, out))
	}
}

func withText(e event.Event, text string) event.Event {
	b := *e.Content
	b.Text = text
	e.Content = &b
	return e
}
