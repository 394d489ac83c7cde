// Package gemini is the client of the Gemini API wire (generateContent).
package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
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

type client struct {
	cfg    Config
	base   string
	conn   *transport.SSEClient // its URL is set per call: the model is in the path
	header http.Header
}

// New returns a streaming Gemini API (streamGenerateContent) Provider (kind
// gemini).
func New(cfg Config) llm.Provider {
	base := cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	h := transport.Header("x-goog-api-key", "", cfg.APIKey, nil, cfg.Headers)
	return &client{cfg: cfg, base: base, header: h,
		conn: transport.NewSSEClient("", cfg.Timeout, cfg.HTTPClient, transport.Secrets(cfg.APIKey, base, cfg.Headers))}
}

// Stream implements llm.Provider.
func (p *client) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
	resp, err := p.stream(ctx, req, onDelta)
	return resp, p.conn.Hide(err)
}

func (p *client) stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
	if req == nil {
		return nil, errors.New("llm: nil request")
	}
	model := strings.TrimPrefix(req.Model, "models/")
	if model == "" {
		return nil, errors.New("llm: gemini: no model")
	}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = p.cfg.MaxTokens
	}
	wreq, err := buildGMRequest(req, maxTokens, p.cfg.Thinking, p.cfg.ThinkingBudget)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(wreq)
	if err != nil {
		return nil, fmt.Errorf("llm: encoding request: %w", err)
	}
	// The key travels in the header only: a URL ends up in proxy logs.
	conn := *p.conn
	conn.URL = transport.Endpoint(p.base, "/models/"+url.PathEscape(model)+":streamGenerateContent", "alt=sse")
	resp, err := conn.Do(ctx, body, p.header, func(r io.Reader) (*llm.Response, error) {
		return decodeGMStream(r, p.cfg.MaxAnswerBytes, onDelta)
	})
	if err != nil {
		return nil, gmClassify(err)
	}
	return resp, nil
}

// gmClassify marks a 400 whose message says the input is over the model's
// token limit ("The input token count (1200000) exceeds the maximum number
// of tokens allowed (1048576).").
func gmClassify(err error) error {
	return transport.MarkContextTooLong(err, []string{"token count", "exceeds the maximum"})
}
