// Package llm is the model API of openheim: the Provider interface and its
// request, delta, response and tool-spec types, the Embedder interface, and
// the error types every wire reports in. It is a leaf: tools and the agent
// loop import it without importing any client. The clients are packages
// beside it, one per wire (openai, anthropic, gemini, replay, embedding),
// on the shared HTTP plumbing of transport, with retry wrapping them; the
// agent loop never sees a vendor wire format.
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/message"
)

// A call stops for one of the turn's stop reasons (event.StopEndTurn,
// event.StopMaxTokens, event.StopRefusal), which the wires map their
// vendors' finish reasons onto, or for one of these, which never end a
// turn by themselves.
const (
	// StopToolUse: the reply asks for tools; the loop runs them.
	StopToolUse event.StopReason = "tool_use"
	// StopPauseTurn: the provider paused a long turn (Anthropic server
	// tools); the loop sends the reply back as is to let it continue.
	StopPauseTurn event.StopReason = "pause_turn"
)

// ErrContextTooLong is wrapped by a provider's error when the API rejected
// the request for not fitting the model's context window (each API says so
// in its own status and body). It is not retried as is: the agent loop
// retries with a smaller request.
var ErrContextTooLong = errors.New("the request does not fit the model's context window")

// ToolSpec is a tool offered to the model.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Request is one model call.
type Request struct {
	Model     string            `json:"model"`
	System    string            `json:"system,omitempty"`
	Messages  []message.Message `json:"messages"`
	Tools     []ToolSpec        `json:"tools,omitempty"`
	MaxTokens int               `json:"max_tokens,omitempty"`
}

// DeltaKind says what a streamed fragment is.
type DeltaKind int

const (
	DeltaText     DeltaKind = iota // visible answer text
	DeltaThinking                  // reasoning text (Summary: a summary of it)
	// DeltaToolCall: the reply began a tool call; Call says which. Its
	// arguments are in the Response only.
	DeltaToolCall
	// DeltaRetry: the call failed and is tried again (retry.Wrap sends it
	// before waiting); Retry says when and why. Nothing of the failed
	// attempt was forwarded.
	DeltaRetry
)

// Delta is a fragment forwarded to the user while a call streams. Only
// DeltaText and DeltaThinking carry Text.
type Delta struct {
	Kind DeltaKind
	Text string
	// Summary marks thinking that is the provider's summary of the model's
	// reasoning (the OpenAI Responses API shows no more).
	Summary bool
	Call    *CallStart   // DeltaToolCall
	Retry   *RetryNotice // DeltaRetry
}

// CallStart names a tool call as the reply begins it.
type CallStart struct {
	// Index is the call's place among the reply's tool calls (0-based):
	// the tool_use blocks of Response.Content come in that order.
	Index int
	ID    string // "" when the server sends none (one is made up later)
	Name  string
}

// RetryNotice says a failed call will be tried again.
type RetryNotice struct {
	Attempt    int           // the retry about to be made, from 1
	MaxRetries int           // how many the policy allows
	Delay      time.Duration // the wait before it
	Err        string        // why the attempt failed
	Asked      bool          // Delay is the server's Retry-After
}

// ToolCallDelta is the delta of a tool call the reply begins.
func ToolCallDelta(index int, id, name string) Delta {
	return Delta{Kind: DeltaToolCall, Call: &CallStart{Index: index, ID: id, Name: name}}
}

// Response is the assembled result of one call.
type Response struct {
	// Content is the assistant message's blocks in order: thinking, text,
	// tool_use (arguments as the complete JSON string the model sent).
	Content    []message.Block
	StopReason event.StopReason
	Usage      message.Usage
}

// Provider streams one model call. onDelta is called for every fragment as it
// arrives; an error from onDelta aborts the call and is returned.
type Provider interface {
	Stream(ctx context.Context, req *Request, onDelta func(Delta) error) (*Response, error)
}

// Embedder turns texts into vectors for semantic search.
type Embedder interface {
	// Embed returns one vector per text, in input order. All vectors of one
	// call have the same, non-zero dimension. No texts means no request and
	// an empty result.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}
