// Package transport is what every vendor client of runtime/llm shares: the
// set-up a wire embeds (Client: its config, API root, connection and
// header, and the Provider frame around its call), the HTTP exchange (an
// event-stream POST under an idle watchdog, a JSON POST), endpoints and
// headers, masking a client's own secrets in its errors, the classification
// of failures into llm's error types, the errors every stream decoder words
// alike and the path of a streamed fragment to the user, and the bounds on
// what a server may send (error bodies, the answer cap). A wire package
// builds its requests and decodes its own format on top of it; nothing here
// knows a vendor.
package transport

import (
	"net/http"
	"time"
)

// Config is what a streaming wire client takes from a provider's config.
// Every wire takes the same Config, so that the one place constructing
// providers by kind (engine.NewProvider) builds it once and adding a wire
// is adding a package and one line there. A wire ignores the fields it has
// no use for; its New says which it reads and their defaults.
type Config struct {
	BaseURL string // up to and including the API version; empty: the wire's default
	APIKey  string // sent in the wire's key header when set, never in the URL
	// Timeout bounds connecting, waiting for the response headers, and each
	// silence between body bytes. It does not cap the whole stream: a long
	// answer that keeps streaming is fine. Zero means DefaultTimeout,
	// negative disables it.
	Timeout time.Duration
	// MaxTokens is the answer's token cap when Request.MaxTokens is zero;
	// what 0 means is the wire's.
	MaxTokens int
	// Thinking is "" (the wire's default), "adaptive" (reasoning on, the
	// model decides how much), "budget" (reasoning on, ThinkingBudget
	// tokens) or "off", for wires that can turn reasoning on or off. Each
	// wire says what it sends for which model.
	Thinking string
	// ThinkingBudget is the reasoning budget in tokens where one is sent;
	// zero means the wire's default.
	ThinkingBudget int
	// AdaptiveThinking overrides a wire's table of models that take an
	// adaptive reasoning setting (Anthropic's {"type":"adaptive"}): true
	// sends it for any model, false never; nil follows the table.
	AdaptiveThinking *bool
	// MaxCompletionTokens sends max_completion_tokens instead of max_tokens
	// (OpenAI chat: kind openai, whose reasoning models reject max_tokens).
	MaxCompletionTokens bool
	// HTTPClient replaces the default client. The idle timeout still
	// applies; connect and header timeouts are then the client's business.
	HTTPClient *http.Client
	Headers    map[string]string // extra headers, e.g. for OpenRouter or a gateway
	// MaxAnswerBytes caps one answer (text, thinking and tool-call
	// arguments): past it the stream is closed and the call ends as
	// max_tokens with what came before. Zero means DefaultMaxAnswerBytes,
	// negative no cap.
	MaxAnswerBytes int
}
