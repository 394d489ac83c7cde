// Package responses is the client of the OpenAI Responses API wire (kind
// openai_responses): POST {base}/responses with stream: true, what Codex
// and OpenAI's reasoning models use. Requests are stateless (store: false):
// the whole conversation goes in input every time, with the reasoning items
// the model returned carried back encrypted (include
// reasoning.encrypted_content), so no response id is ever referenced.
package responses

import (
	"context"

	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/llm/transport"
)

// DefaultBaseURL is used when Config.BaseURL is empty.
const DefaultBaseURL = "https://api.openai.com/v1"

// Origin marks the thinking blocks this wire returns: their signature is
// a reasoning item's encrypted_content, which only this wire sends back
// (message.Block.Origin).
const Origin = "openai_responses"

// Config is the shared client config. This wire reads BaseURL (up to and
// including /v1), APIKey (a Bearer token), Timeout, MaxTokens
// (max_output_tokens; 0 leaves the cap to the server), Thinking and
// AdaptiveThinking (see reasoningFor), HTTPClient, Headers and
// MaxAnswerBytes; not ThinkingBudget (the API has no token budget).
type Config = transport.Config

// api is the OpenAI API (and the servers copying it): a Bearer token.
var api = transport.API{BaseURL: DefaultBaseURL, KeyHeader: "Authorization", KeyPrefix: "Bearer "}

type client struct{ transport.Client }

// New returns a streaming Responses API Provider. Servers copying the API
// (LM Studio, vLLM, Ollama, gateways) work too.
func New(cfg Config) llm.Provider {
	p := &client{transport.NewClient(cfg, api, "/responses")}
	return p.Provider(p.stream)
}

func (p *client) stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
	wreq := buildRequest(req, p.MaxTokens(req), reasoningFor(p.Cfg.Thinking, req.Model, p.Cfg.AdaptiveThinking))
	resp, err := p.Post(ctx, "", wreq, decodeStream, onDelta)
	return resp, classify(err)
}

// classify marks a 400 that says the input does not fit the context
// window: code context_length_exceeded, "Your input exceeds the context
// window of this model", or the chat API's wording that compatible
// servers copy.
func classify(err error) error {
	return transport.MarkContextTooLong(err, []string{"context_length_exceeded"},
		[]string{"exceeds the context window"}, []string{"maximum context length"})
}
