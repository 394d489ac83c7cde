// Package openai is the client of the OpenAI chat-completions wire (kinds
// openai and openai_compatible), the one most local and hosted servers copy.
package openai

import (
	"context"
	"errors"
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

// api is the OpenAI API (and every server copying it): a Bearer token.
var api = transport.API{BaseURL: DefaultBaseURL, KeyHeader: "Authorization", KeyPrefix: "Bearer "}

type openAI struct {
	transport.Client
	// noStreamOptions is set once the server rejected stream_options, so
	// later calls skip the doomed first attempt.
	noStreamOptions atomic.Bool
}

// New returns a streaming chat-completions Provider. It also serves the
// many compatible servers (vLLM, Ollama, llama.cpp, OpenRouter, ...).
func New(cfg Config) llm.Provider {
	p := &openAI{Client: transport.NewClient(cfg, api, "/chat/completions")}
	return p.Provider(p.stream)
}

func (p *openAI) stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta) error) (*llm.Response, error) {
	maxTokens := p.MaxTokens(req)
	withOpts := !p.noStreamOptions.Load()
	for {
		resp, err := p.Post(ctx, "", buildOARequest(req, maxTokens, p.Cfg.MaxCompletionTokens, withOpts), decodeOAStream, onDelta)
		var se *llm.StatusError
		if withOpts && errors.As(err, &se) && se.Status == http.StatusBadRequest &&
			(strings.Contains(se.Body, "stream_options") || strings.Contains(se.Body, "include_usage")) {
			p.noStreamOptions.Store(true)
			withOpts = false
			slog.Info("llm: server rejects stream_options; continuing without usage reporting", "url", p.Conn.URL)
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
