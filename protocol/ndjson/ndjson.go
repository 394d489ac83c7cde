// Package ndjson encodes a turn's event stream as the NDJSON of
// `openheim prompt --json` (DESIGN.md §3): the turn's opening session info
// as the header line, every session/update as {sessionId, update}, and the
// prompt result last. It only adapts the stream: every line but the last
// is an event.
package ndjson

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"sync"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/redact"
)

// Schema is the version of the NDJSON format; bumped only on breaking change.
const Schema = 1

// Result is the last line: the prompt result.
type Result struct {
	SessionID  string           `json:"sessionId"`
	StopReason event.StopReason `json:"stopReason"`
	Usage      acp.Usage        `json:"usage"`
	Meta       map[string]any   `json:"_meta"`
}

// Encoder writes one JSON object per line and flushes after each, so a
// script reading the pipe sees every event as it happens.
type Encoder struct {
	mu  sync.Mutex
	w   *bufio.Writer
	red *redact.Redactor
	buf bytes.Buffer
	err error
	// opened: the turn's header is written; the next session info opens
	// the next turn only after Finish.
	opened bool
}

// NewEncoder returns an encoder writing to w.
func NewEncoder(w io.Writer) *Encoder { return &Encoder{w: bufio.NewWriter(w)} }

// WithRedactor makes every line pass r (the config's secrets: an error in
// _meta.error, a failed MCP server's status, a tool's output) and returns e.
// Each line is masked whole, before it is written.
func (e *Encoder) WithRedactor(r *redact.Redactor) *Encoder {
	e.red = r
	return e
}

// Err is the first write error, if any.
func (e *Encoder) Err() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err
}

func (e *Encoder) line(v any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err != nil {
		return
	}
	// Encode adds the newline; HTML escaping would only make file and
	// tool text harder to read in a terminal.
	e.buf.Reset()
	enc := json.NewEncoder(&e.buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	if err == nil {
		_, err = e.w.Write(e.red.Bytes(e.buf.Bytes()))
	}
	if err == nil {
		err = e.w.Flush()
	}
	if e.buf.Cap() > 1<<20 { // one huge line should not pin its size
		e.buf = bytes.Buffer{}
	}
	e.err = err
}

// Emit implements event.Sink: session updates become lines. The first
// session_info_update of a turn (the engine opens every turn with one) is
// the header: its title and time, and in _meta the schema, model, provider
// and cwd. The turn's end is written by Finish, which knows the exit code.
func (e *Encoder) Emit(ev event.Event) {
	if ev.Kind == event.SessionInfoUpdate && ev.Info != nil && e.open() {
		e.header(ev.SessionID, ev.Info)
		return
	}
	if u, ok := acp.UpdateFromEvent(ev); ok {
		e.line(acp.SessionNotification{SessionID: ev.SessionID, Update: u})
	}
}

// open reports whether the next line is a turn's header, and makes it so.
func (e *Encoder) open() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	first := !e.opened
	e.opened = true
	return first
}

func (e *Encoder) header(sessionID string, info *event.SessionInfo) {
	title, at := info.Title, acp.Timestamp(info.UpdatedAt)
	u := acp.SessionUpdate{SessionUpdate: string(event.SessionInfoUpdate), Title: &title, UpdatedAt: &at,
		Meta: map[string]any{"schema": Schema, "model": info.Model, "provider": info.Provider, "cwd": info.Cwd}}
	e.line(acp.SessionNotification{SessionID: sessionID, Update: u})
}

// Finish writes the last line.
func (e *Encoder) Finish(sessionID string, end event.End, exitCode int, errMsg string) {
	meta := map[string]any{"iterations": end.Iterations, "durationMs": end.Duration.Milliseconds(), "exitCode": exitCode}
	if errMsg != "" {
		meta["error"] = errMsg
	}
	e.line(Result{SessionID: sessionID, StopReason: end.StopReason, Usage: acp.UsageFrom(end.Usage), Meta: meta})
	e.mu.Lock()
	e.opened = false
	e.mu.Unlock()
}
