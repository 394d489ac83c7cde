// Package openai is the client of the OpenAI chat-completions wire (kinds
// openai and openai_compatible), the one most local and hosted servers copy.
package openai

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

	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/llm/transport"
)

// DefaultBaseURL is used when Config.BaseURL is empty.
const DefaultBaseURL = "https://api.openai.com/v1"

// Config is the shared client config. This wire reads BaseURL (up to and
// including /v1), APIKey (a Bearer token), Timeout, MaxTokens (0 leaves the
// cap to the server), MaxCompletionTokens, HTTPClient, Headers and
// MaxAnswerBytes; not Thinking.
type Config = transport.Config

type openAI struct {
	cfg  Config
	conn *transport.SSEClient
	// noStreamOptions is set once the server rejected stream_options, so
	// later calls skip the doomed first attempt.
	noStreamOptions atomic.Bool
}

// New returns a streaming chat-completions Provider. It also serves the
// many compatible servers (vLLM, Ollama, llama.cpp, OpenRouter, ...).
func New(cfg Config) llm.Provider {
	base := cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	return &openAI{cfg: cfg, conn: transport.NewSSEClient(transport.Endpoint(base, "/chat/completions", ""), cfg.Timeout, cfg.HTTPClient,
		transport.Secrets(cfg.APIKey, base, cfg.Headers))}
}

// Stream implements llm.Provider.
func (p *openAI) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
	resp, err := p.stream(ctx, req, onDelta)
	return resp, p.conn.Hide(err)
}

func (p *openAI) stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
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
		var se *llm.StatusError
		if withOpts && errors.As(err, &se) && se.Status == http.StatusBadRequest &&
			(strings.Contains(se.Body, "stream_options") || strings.Contains(se.Body, "include_usage")) {
			p.noStreamOptions.Store(true)
			withOpts = false
			slog.Info("llm: server rejects stream_options; continuing without usage reporting", "url", p.conn.URL)
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
	return transport.MarkContextTooLong(err, []string{"maximum context length"}, []string{"context_length_exceeded"},
		[]string{"exceeds the available context size"})
}

// do runs one HTTP exchange and decodes the chunk stream.
func (p *openAI) do(ctx context.Context, body []byte, onDelta func(llm.Delta) error) (*llm.Response, error) {
	h := transport.Header("Authorization", "Bearer ", p.cfg.APIKey, nil, p.cfg.Headers)
	return p.conn.Do(ctx, body, h, func(r io.Reader) (*llm.Response, error) {
		return decodeOAStream(r, p.cfg.MaxAnswerBytes, onDelta)
	})
}
