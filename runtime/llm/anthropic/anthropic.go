// Package anthropic is the client of the Anthropic Messages API wire.
package anthropic

import (
	"context"

	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/llm/transport"
)

// DefaultBaseURL is used when Config.BaseURL is empty.
const DefaultBaseURL = "https://api.anthropic.com/v1"

// Version is the anthropic-version header sent unless Config.Headers
// overrides it.
const Version = "2023-06-01"

// Config is the shared client config. This wire reads BaseURL (up to and
// including /v1), APIKey (sent as x-api-key), Timeout, MaxTokens (0 means
// 16000: the API requires a cap), Thinking ("" or "off" sends no thinking;
// "adaptive" sends {"type":"adaptive"} to the models that take it and the
// budget form to the others, see thinking.go; "budget" always the budget
// form), ThinkingBudget (the budget form's budget_tokens; 0 means 3/4 of
// max_tokens; at least 1024 and below max_tokens, thinking off for a call
// whose max_tokens leaves no room), AdaptiveThinking (overrides the model
// table), Headers (they extend or override the defaults: x-api-key,
// anthropic-version, content-type; e.g. another anthropic-version or an
// anthropic-beta flag), HTTPClient and MaxAnswerBytes.
type Config = transport.Config

// api is the Messages API: the key in x-api-key, the version in its header.
var api = transport.API{BaseURL: DefaultBaseURL, KeyHeader: "x-api-key",
	Headers: map[string]string{"anthropic-version": Version}}

type client struct{ transport.Client }

// New returns a streaming Messages API Provider (kind anthropic), also
// usable with compatible gateways.
func New(cfg Config) llm.Provider {
	p := &client{transport.NewClient(cfg, api, "/messages")}
	return p.Provider(p.stream)
}

func (p *client) stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
	maxTokens := p.MaxTokens(req)
	if maxTokens <= 0 {
		maxTokens = anDefaultMaxTokens
	}
	thinking := thinkingFor(p.Cfg.Thinking, req.Model, maxTokens, p.Cfg.ThinkingBudget, p.Cfg.AdaptiveThinking)
	resp, err := p.Post(ctx, "", buildAnRequest(req, maxTokens, thinking), decodeAnStream, onDelta)
	return resp, anClassify(err)
}

// anClassify marks a 400 that says the prompt does not fit the context
// window: "prompt is too long: 250000 tokens > 200000 maximum"; older
// models: "input length and `max_tokens` exceed context limit: ...".
func anClassify(err error) error {
	return transport.MarkContextTooLong(err, []string{"prompt is too long"}, []string{"exceed context limit"})
}
