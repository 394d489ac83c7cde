// Package ndjson encodes a turn's event stream as the NDJSON of
// `openheim prompt --json` (DESIGN.md §3): a session info line, every
// session/update as {sessionId, update}, and the prompt result last.
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

// SessionInfo is what the first line says about the session.
type SessionInfo struct {
	SessionID string
	Title     string
	Model     string
	Provider  string
	Cwd       string
	UpdatedAt string
}

// Result is the last line: the prompt result.
type Result struct {
	SessionID  string         `json:"sessionId"`
	StopReason string         `json:"stopReason"`
	Usage      acp.Usage      `json:"usage"`
	Meta       map[string]any `json:"_meta"`
}

// Encoder writes one JSON object per line and flushes after each, so a
// script reading the pipe sees every event as it happens.
type Encoder struct {
	mu  sync.Mutex
	w   *bufio.Writer
	red *redact.Redactor
	buf bytes.Buffer
	err error
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

// Start writes the first line.
func (e *Encoder) Start(s SessionInfo) {
	title := s.Title
	u := acp.SessionUpdate{SessionUpdate: string(event.SessionInfoUpdate), Title: &title,
		Meta: map[string]any{"schema": Schema, "model": s.Model, "provider": s.Provider, "cwd": s.Cwd}}
	if s.UpdatedAt != "" {
		u.UpdatedAt = &s.UpdatedAt
	}
	e.line(acp.SessionNotification{SessionID: s.SessionID, Update: u})
}

// MCPServerFailed writes a session_info_update telling that an MCP server
// could not be connected (its tools are left out of the turn):
// _meta.openheim.mcpServerFailed carries its status (seed 000's
// McpServerStatus). Written right after the first line, once per server.
func (e *Encoder) MCPServerFailed(sessionID string, status any) {
	u := acp.SessionUpdate{SessionUpdate: string(event.SessionInfoUpdate),
		Meta: map[string]any{"openheim": map[string]any{"mcpServerFailed": status}}}
	e.line(acp.SessionNotification{SessionID: sessionID, Update: u})
}

// Emit implements event.Sink: session updates become lines; the turn's end
// is written by Finish, which knows the exit code.
func (e *Encoder) Emit(ev event.Event) {
	if u, ok := acp.UpdateFromEvent(ev); ok {
		e.line(acp.SessionNotification{SessionID: ev.SessionID, Update: u})
	}
}

// Finish writes the last line.
func (e *Encoder) Finish(sessionID string, end event.End, exitCode int, errMsg string) {
	meta := map[string]any{"iterations": end.Iterations, "durationMs": end.Duration.Milliseconds(), "exitCode": exitCode}
	if errMsg != "" {
		meta["error"] = errMsg
	}
	e.line(Result{SessionID: sessionID, StopReason: end.StopReason, Usage: acp.UsageFrom(end.Usage), Meta: meta})
}
