// Package gemini is the client of the Gemini API wire (generateContent).
package gemini

import (
	"context"
	"errors"
	"net/url"
	"strings"

	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/llm/transport"
)

// DefaultBaseURL is used when Config.BaseURL is empty.
const DefaultBaseURL = "https://generativelanguage.googleapis.com/v1beta"

// Config is the shared client config. This wire reads BaseURL (up to and
// including the version), APIKey (sent only in the x-goog-api-key header,
// never in the URL), Timeout, MaxTokens (maxOutputTokens; 0 leaves it to
// the model), Thinking and ThinkingBudget (see thinkingConfig), Headers,
// HTTPClient and MaxAnswerBytes.
type Config = transport.Config

// api is the Gemini API: the key travels in a header only, never in the
// URL, which ends up in proxy logs.
var api = transport.API{BaseURL: DefaultBaseURL, KeyHeader: "x-goog-api-key"}

type client struct{ transport.Client }

// New returns a streaming Gemini API (streamGenerateContent) Provider (kind
// gemini). Its endpoint is set per call: the model is in the path.
func New(cfg Config) llm.Provider {
	p := &client{transport.NewClient(cfg, api, "")}
	return p.Provider(p.stream)
}

func (p *client) stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
	model := strings.TrimPrefix(req.Model, "models/")
	if model == "" {
		return nil, errors.New("llm: gemini: no model")
	}
	wreq, err := buildGMRequest(req, p.MaxTokens(req), p.Cfg.Thinking, p.Cfg.ThinkingBudget)
	if err != nil {
		return nil, err
	}
	at := transport.Endpoint(p.Base, "/models/"+url.PathEscape(model)+":streamGenerateContent", "alt=sse")
	resp, err := p.Post(ctx, at, wreq, decodeGMStream, onDelta)
	return resp, gmClassify(err)
}

// gmClassify marks a 400 whose message says the input is over the model's
// token limit ("The input token count (1200000) exceeds the maximum number
// of tokens allowed (1048576).").
func gmClassify(err error) error {
	return transport.MarkContextTooLong(err, []string{"token count", "exceeds the maximum"})
}
