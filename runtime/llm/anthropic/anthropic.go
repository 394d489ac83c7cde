package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// DefaultAnthropicBaseURL is used when AnthropicConfig.BaseURL is empty.
const DefaultAnthropicBaseURL = "https://api.anthropic.com/v1"

// AnthropicVersion is the anthropic-version header sent unless
// AnthropicConfig.Headers overrides it.
const AnthropicVersion = "2023-06-01"

// AnthropicConfig configures an Anthropic Messages API client (kind
// anthropic), also usable with compatible gateways.
type AnthropicConfig struct {
	BaseURL string // up to and including /v1; default DefaultAnthropicBaseURL
	APIKey  string // sent as x-api-key when set
	// Timeout bounds connecting, waiting for the response headers, and each
	// silence between body bytes, not the whole stream. Zero means
	// DefaultTimeout, negative disables it.
	Timeout time.Duration
	// MaxTokens is used when Request.MaxTokens is zero; 0 means 16000 (the
	// API requires a cap).
	MaxTokens int
	// Thinking: "" or "off" sends no thinking; "adaptive" turns extended
	// thinking on with a budget of 3/4 of max_tokens (at least 1024; off
	// when max_tokens leaves no room for that).
	Thinking string
	// Headers extend or override the default headers (x-api-key,
	// anthropic-version, content-type), e.g. another anthropic-version or an
	// anthropic-beta flag.
	Headers map[string]string
	// HTTPClient replaces the default client. The idle timeout still
	// applies; connect and header timeouts are then the client's business.
	HTTPClient *http.Client
	// MaxAnswerBytes caps one answer, as OpenAIConfig.MaxAnswerBytes does.
	MaxAnswerBytes int
}

type anthropic struct {
	cfg      AnthropicConfig
	conn     *sseClient
	header   http.Header
	thinking bool
}

// NewAnthropic returns a streaming Messages API Provider.
func NewAnthropic(cfg AnthropicConfig) Provider {
	base := cfg.BaseURL
	if base == "" {
		base = DefaultAnthropicBaseURL
	}
	h := requestHeader("x-api-key", "", cfg.APIKey, map[string]string{"anthropic-version": AnthropicVersion}, cfg.Headers)
	return &anthropic{
		cfg: cfg,
		conn: newSSEClient(endpoint(base, "/messages", ""), cfg.Timeout, cfg.HTTPClient,
			secretsOf(cfg.APIKey, base, cfg.Headers)),
		header:   h,
		thinking: strings.EqualFold(strings.TrimSpace(cfg.Thinking), "adaptive"),
	}
}

// Stream implements Provider.
func (p *anthropic) Stream(ctx context.Context, req *Request, onDelta func(Delta) error) (*Response, error) {
	resp, err := p.stream(ctx, req, onDelta)
	return resp, hide(err, p.conn.red)
}

func (p *anthropic) stream(ctx context.Context, req *Request, onDelta func(Delta) error) (*Response, error) {
	if req == nil {
		return nil, errors.New("llm: nil request")
	}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = p.cfg.MaxTokens
	}
	if maxTokens <= 0 {
		maxTokens = anDefaultMaxTokens
	}
	body, err := json.Marshal(buildAnRequest(req, maxTokens, p.thinking))
	if err != nil {
		return nil, fmt.Errorf("llm: encoding request: %w", err)
	}
	resp, err := p.conn.do(ctx, body, p.header, func(r io.Reader) (*Response, error) {
		return decodeAnStream(r, p.cfg.MaxAnswerBytes, onDelta)
	})
	if err != nil {
		return nil, anClassify(err)
	}
	return resp, nil
}

// anClassify marks a 400 that says the prompt does not fit the context
// window: "prompt is too long: 250000 tokens > 200000 maximum"; older
// models: "input length and `max_tokens` exceed context limit: ...".
func anClassify(err error) error {
	return markContextTooLong(err, []string{"prompt is too long"}, []string{"exceed context limit"})
}
