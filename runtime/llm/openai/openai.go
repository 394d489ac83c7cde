package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// DefaultOpenAIBaseURL is used when OpenAIConfig.BaseURL is empty.
const DefaultOpenAIBaseURL = "https://api.openai.com/v1"

// OpenAIConfig configures an OpenAI chat-completions client; it also serves
// the many compatible servers (vLLM, Ollama, llama.cpp, OpenRouter, ...).
type OpenAIConfig struct {
	BaseURL string // up to and including /v1; default DefaultOpenAIBaseURL
	APIKey  string // sent as a Bearer token when set
	// Timeout bounds connecting, waiting for the response headers, and each
	// silence between body bytes. It does not cap the whole stream: a long
	// answer that keeps streaming is fine. Zero means DefaultTimeout,
	// negative disables it.
	Timeout   time.Duration
	MaxTokens int // used when Request.MaxTokens is zero; 0 leaves it to the server
	// MaxCompletionTokens sends max_completion_tokens (kind openai: its
	// reasoning models reject max_tokens) instead of max_tokens.
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

type openAI struct {
	cfg  OpenAIConfig
	conn *sseClient
	// noStreamOptions is set once the server rejected stream_options, so
	// later calls skip the doomed first attempt.
	noStreamOptions atomic.Bool
}

// NewOpenAI returns a streaming chat-completions Provider.
func NewOpenAI(cfg OpenAIConfig) Provider {
	base := cfg.BaseURL
	if base == "" {
		base = DefaultOpenAIBaseURL
	}
	return &openAI{cfg: cfg, conn: newSSEClient(endpoint(base, "/chat/completions", ""), cfg.Timeout, cfg.HTTPClient,
		secretsOf(cfg.APIKey, base, cfg.Headers))}
}

// Stream implements Provider.
func (p *openAI) Stream(ctx context.Context, req *Request, onDelta func(Delta) error) (*Response, error) {
	resp, err := p.stream(ctx, req, onDelta)
	return resp, hide(err, p.conn.red)
}

func (p *openAI) stream(ctx context.Context, req *Request, onDelta func(Delta) error) (*Response, error) {
	if req == nil {
		return nil, errors.New("llm: nil request")
	}
	maxTokens := req.MaxTokens
	if maxTokens == 0 {
		maxTokens = p.cfg.MaxTokens
	}
	withOpts := !p.noStreamOptions.Load()
	for {
		body, err := json.Marshal(buildOARequest(req, maxTokens, p.cfg.MaxCompletionTokens, withOpts))
		if err != nil {
			return nil, fmt.Errorf("llm: encoding request: %w", err)
		}
		resp, err := p.do(ctx, body, onDelta)
		var se *StatusError
		if withOpts && errors.As(err, &se) && se.Status == http.StatusBadRequest &&
			(strings.Contains(se.Body, "stream_options") || strings.Contains(se.Body, "include_usage")) {
			p.noStreamOptions.Store(true)
			withOpts = false
			slog.Info("llm: server rejects stream_options; continuing without usage reporting", "url", p.conn.url)
			continue
		}
		return resp, oaClassify(err)
	}
}

// oaClassify marks a 400 that says the request does not fit the context
// window: OpenAI's context_length_exceeded ("This model's maximum context
// length is 128000 tokens. However, your messages resulted in ..."), which
// vLLM and most compatible servers copy, and llama.cpp's "exceeds the
// available context size".
func oaClassify(err error) error {
	return markContextTooLong(err, []string{"maximum context length"}, []string{"context_length_exceeded"},
		[]string{"exceeds the available context size"})
}

// do runs one HTTP exchange and decodes the chunk stream.
func (p *openAI) do(ctx context.Context, body []byte, onDelta func(Delta) error) (*Response, error) {
	h := requestHeader("Authorization", "Bearer ", p.cfg.APIKey, nil, p.cfg.Headers)
	return p.conn.do(ctx, body, h, func(r io.Reader) (*Response, error) {
		return decodeOAStream(r, p.cfg.MaxAnswerBytes, onDelta)
	})
}
