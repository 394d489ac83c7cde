// Package event is the one event stream of a turn. Its variants mirror ACP
// session/update (DESIGN.md §2) plus the turn's end; every transport (NDJSON,
// ACP, chat, SSE, a subagent's parent) adapts this type at its edge.
package event

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/openheim/openheim/runtime/message"
)

// Kind names a variant. The session/update kinds use ACP's sessionUpdate names.
type Kind string

const (
	AgentMessageChunk Kind = "agent_message_chunk"
	AgentThoughtChunk Kind = "agent_thought_chunk"
	UserMessageChunk  Kind = "user_message_chunk"
	ToolCall          Kind = "tool_call"
	ToolCallUpdate    Kind = "tool_call_update"
	Plan              Kind = "plan"
	UsageUpdate       Kind = "usage_update"
	// SessionInfoUpdate carries the session's metadata. A turn's stream
	// opens with one (title, model, provider, cwd, updated_at) before
	// anything else the turn emits.
	SessionInfoUpdate Kind = "session_info_update"
	// MCPServerFailed says an MCP server the turn's tools come from could
	// not be connected, so its tools are left out; Server is its status.
	// Emitted right after the turn's opening session info.
	MCPServerFailed Kind = "mcp_server_failed"
	// Dropped says a slow consumer lost events; Count says how many. Only
	// droppable kinds are ever lost (Kind.Droppable).
	Dropped Kind = "dropped"
	// TurnEnd is the last event of a turn; it is not a session/update.
	TurnEnd Kind = "turn_end"
	// TurnStart opens a turn; Messages[0] is the user's message. Like
	// TurnEnd it is published by a hub to watchers of a session, not by
	// the agent loop.
	TurnStart Kind = "turn_start"
	// Committed says Messages were stored, the first at position Index of
	// the session's history: transports that name items by their place in
	// the history (the sessions API) learn it here.
	Committed Kind = "committed"
	// ToolCallStreaming says the model began a tool call in the reply it
	// is streaming: Tool has its id (may be empty: the server sent none),
	// Title (the tool's name) and Kind; Index is its place among the
	// reply's calls. tool_call (pending) follows once the reply is whole.
	// ACP has no variant for it: its transports leave it out.
	ToolCallStreaming Kind = "tool_call_streaming"
	// Retry says the model call failed and is tried again after Retry's
	// delay; nothing of the failed attempt reached the stream.
	Retry Kind = "retry"
	// SubagentStarted says a subagent began its run as a session of its
	// own (Child), a child of the turn's session.
	SubagentStarted Kind = "subagent_started"
)

// Droppable reports whether a bounded buffer may drop events of kind k
// when its consumer falls behind: text and thought chunks, usage and plan
// updates are superseded or stored whole later (a Committed message holds
// the full text), as are the start of a tool call streaming (its call is
// committed) and a retry notice. Everything else is what a transport needs to stay
// consistent (a committed message, a tool call and its updates, the turn's
// start and end, session info) and is never dropped.
func (k Kind) Droppable() bool {
	switch k {
	case AgentMessageChunk, AgentThoughtChunk, UserMessageChunk, UsageUpdate, Plan, ToolCallStreaming, Retry:
		return true
	}
	return false
}

// Tool call statuses.
const (
	StatusPending    = "pending"
	StatusInProgress = "in_progress"
	StatusCompleted  = "completed"
	StatusFailed     = "failed"
)

// Event is one element of a turn's stream. Which fields are set depends on Kind.
type Event struct {
	SessionID string
	Kind      Kind

	// Content of message and thought chunks (a text or image block).
	Content *message.Block
	// Summary marks a thought chunk that is the provider's summary of the
	// model's reasoning rather than the reasoning itself.
	Summary bool

	Tool  *ToolCallInfo // tool_call, tool_call_update
	Usage *ContextUsage // usage_update
	Info  *SessionInfo  // session_info_update
	// Server is an MCP server's status (mcp_server_failed).
	Server *MCPServerStatus
	Plan   []PlanEntry // plan
	// Count: dropped; on a Committed relayed between replicas without its
	// Messages (too large), how many the watchers' replica reads from the
	// store.
	Count int
	End   *End // turn_end

	Messages []message.Message // turn_start, committed
	Index    int               // committed; tool_call_streaming: the call's place in its reply

	Retry *RetryInfo    // retry
	Child *ChildSession // subagent_started

	// Shared, when set, keeps the event's encodings for the transports it
	// is fanned out to (see Shared); not part of what the event says.
	Shared *Shared
}

// RetryInfo is a model call about to be retried.
type RetryInfo struct {
	Attempt    int           // the retry about to be made, from 1
	MaxRetries int           // how many are allowed
	Delay      time.Duration // the wait before it
	Err        string        // why the attempt failed
	Asked      bool          // Delay is the server's Retry-After
}

// ChildSession is a session a turn started for a subagent.
type ChildSession struct {
	SessionID string // the child's
	CallID    string // the delegating tool call
	Agent     string // the subagent's name (its profile, or "subagent" inline)
}

// ToolCallInfo describes a tool call or a change to one. In an update, empty
// fields are unchanged.
type ToolCallInfo struct {
	ID        string
	Title     string
	Kind      string // ACP tool kind
	Status    string
	RawInput  json.RawMessage // the arguments object (tool_call)
	RawOutput json.RawMessage // the result (final tool_call_update)
	Duration  time.Duration   // final update: how long the tool ran
	// Content is what the call produced or will change, as ACP's
	// ToolCallContent (text or image blocks, diffs, terminals); in an
	// update, non-nil replaces the whole list.
	Content []ToolContent
	// Locations are the files the call touches (ACP ToolCallLocation); in
	// an update, non-nil replaces the whole list.
	Locations []Location
}

// ToolContent is one item of a tool call's content: exactly one of Block,
// Diff and TerminalID is set.
type ToolContent struct {
	Block      *message.Block // ACP {"type":"content","content":{...}}
	Diff       *Diff          // ACP {"type":"diff",...}
	TerminalID string         // ACP {"type":"terminal","terminalId"}
}

// Diff is a change to one file: OldText nil means the file is new.
type Diff struct {
	Path    string // absolute
	OldText *string
	NewText string
}

// Location is a file a tool call touches, and the line when known (1-based).
type Location struct {
	Path string
	Line *int
}

// ContextUsage is how full the context window is after a model call.
type ContextUsage struct {
	Used int64 // tokens in the context now
	Size int64 // the context window, 0 if unknown
	// Cost is what the session has cost so far, when an external agent
	// reports it (ACP usage_update's cost).
	Cost *Cost
}

// Cost is an amount of money in a currency (ISO 4217, e.g. "USD").
type Cost struct {
	Amount   float64
	Currency string
}

// SessionInfo carries session metadata for session_info_update.
type SessionInfo struct {
	Title     string
	UpdatedAt time.Time
	Model     string
	Provider  string
	Cwd       string
}

// MCPServerStatus is an MCP server's status: seed 000's McpServerStatus,
// which runtime/mcp reports (as mcp.Status) and every transport prints as
// is, so it carries its wire names; every key is always present.
type MCPServerStatus struct {
	Name      string  `json:"name"`
	Transport string  `json:"transport"` // "stdio" | "http" | "unknown"
	Command   *string `json:"command"`   // the command only, never args/env (secrets)
	URL       *string `json:"url"`       // without credentials, query, fragment
	Connected bool    `json:"connected"`
	ToolCount int     `json:"tool_count"` // tools offered after enabled/disabled filters
	Error     *string `json:"error"`
}

// PlanEntry is one item of an agent plan.
type PlanEntry struct {
	Content  string
	Status   string
	Priority string
}

// StopReason is why a turn ended: ACP's stop reasons, which every
// transport prints as they are. The loop decides it; the model wires map
// their vendors' finish reasons onto it.
type StopReason string

const (
	StopEndTurn         StopReason = "end_turn"
	StopMaxTokens       StopReason = "max_tokens"
	StopMaxTurnRequests StopReason = "max_turn_requests"
	StopRefusal         StopReason = "refusal"
	StopCancelled       StopReason = "cancelled"
)

// End is the outcome of a turn.
type End struct {
	StopReason StopReason
	Usage      message.Usage // of the turn's last model call
	// Total is the usage of every model call of the turn (what it costs).
	Total      message.Usage
	Iterations int
	Duration   time.Duration
	Err        error // a runtime failure that ended the turn early
}

// Sink consumes events. Emit must not block for long: a sink that may be slow
// wraps itself in a Queue.
//
// The sink a turn emits to must be safe for concurrent use: tools run in
// parallel and subagents emit from their own goroutines (DESIGN.md §2).
// Sync is the one place that makes a sink so; a Queue already is, and Sync
// returns it as it is, so every event passes one serialising lock.
type Sink interface {
	Emit(Event)
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(Event)

// Emit calls f.
func (f SinkFunc) Emit(e Event) { f(e) }

// Discard drops every event (safe for concurrent use).
var Discard Sink = discard{}

type discard struct{}

func (discard) Emit(Event)      {}
func (discard) concurrentSafe() {}

// concurrent is a sink safe for concurrent use: Sync leaves it alone.
type concurrent interface {
	Sink
	concurrentSafe()
}

// Sync returns s made safe for concurrent use: s itself when it already
// is (a Queue, Discard, an earlier Sync), else s behind a mutex. nil is
// Discard.
func Sync(s Sink) Sink {
	switch s.(type) {
	case nil:
		return Discard
	case concurrent:
		return s
	}
	return &syncSink{sink: s}
}

type syncSink struct {
	mu   sync.Mutex
	sink Sink
}

func (s *syncSink) Emit(e Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sink.Emit(e)
}

func (*syncSink) concurrentSafe() {}

// Text returns a text chunk event of the given kind.
func Text(sessionID string, kind Kind, s string) Event {
	b := message.Text(s)
	return Event{SessionID: sessionID, Kind: kind, Content: &b}
}
