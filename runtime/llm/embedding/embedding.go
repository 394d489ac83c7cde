// Package embedding is the embeddings client (llm.Embedder) for the wires
// that have one: OpenAI's /embeddings, which compatible servers copy, and
// Gemini's batchEmbedContents. Both are request/response JSON, unlike the
// streaming chat wires, and share their batching, vector checks and retries,
// so they live together here rather than beside their chat clients.
package embedding

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/llm/retry"
	"github.com/openheim/openheim/runtime/llm/transport"
)

// ErrNoAPI is wrapped by New's error for a provider kind that cannot embed
// (anthropic) or that it does not know.
var ErrNoAPI = errors.New("no embeddings API")

// Batch sizes: what one request carries. Gemini's batchEmbedContents accepts
// at most 100 requests per call.
const (
	DefaultOpenAIBatch = 96
	MaxGeminiBatch     = 100
)

// Config configures New.
type Config struct {
	// Kind is "openai", "openai_compatible", "openai_responses" (the
	// OpenAI embeddings API beside it) or "gemini"; "anthropic" (which has
	// no embeddings API) and anything else are refused.
	Kind string
	// BaseURL: for OpenAI-style kinds up to and including /v1 (default
	// https://api.openai.com/v1); for gemini up to and including /v1beta
	// (default https://generativelanguage.googleapis.com/v1beta).
	BaseURL string
	// APIKey is sent as a Bearer token (OpenAI-style, when set) or in the
	// x-goog-api-key header (gemini), never in the URL.
	APIKey string
	Model  string // required; for gemini with or without "models/"
	// Timeout bounds each HTTP attempt as a whole. Zero means
	// transport.DefaultTimeout, negative disables it.
	Timeout time.Duration
	// BatchSize is how many texts go in one request. Zero or negative:
	// DefaultOpenAIBatch, or MaxGeminiBatch for gemini, which is
	// also the cap for gemini.
	BatchSize int
	// Retry applies to each batch, as it does to a model call.
	Retry retry.Policy
	// HTTPClient replaces the default client; Timeout still applies.
	HTTPClient *http.Client
	Headers    map[string]string // extra headers, e.g. for a gateway
}

// New returns the Embedder for cfg.Kind. The result is safe for concurrent
// use.
func New(cfg Config) (llm.Embedder, error) {
	kind := strings.ToLower(strings.TrimSpace(cfg.Kind))
	const hint = "set memory.embedding_provider to an OpenAI-compatible or Gemini provider"
	switch kind {
	case "openai", "openai_compatible", "openai_responses", "gemini":
	case "anthropic":
		return nil, fmt.Errorf("llm: provider kind %q has %w; %s", cfg.Kind, ErrNoAPI, hint)
	default:
		return nil, fmt.Errorf("llm: unknown provider kind %q has %w; %s", cfg.Kind, ErrNoAPI, hint)
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, fmt.Errorf("llm: embeddings: no model configured for provider kind %q", cfg.Kind)
	}
	h := transport.NewJSONClient(cfg.Timeout, cfg.HTTPClient, transport.Secrets(cfg.APIKey, cfg.BaseURL, cfg.Headers))
	b := &batchEmbedder{pol: cfg.Retry, hide: h.Hide, size: cfg.BatchSize}
	if kind == "gemini" {
		if b.size <= 0 || b.size > MaxGeminiBatch {
			b.size = MaxGeminiBatch
		}
		b.do = newGeminiEmbed(cfg, h)
	} else {
		if b.size <= 0 {
			b.size = DefaultOpenAIBatch
		}
		b.do = newOpenAIEmbed(cfg, h)
	}
	return b, nil
}

// embedBatchFunc makes one HTTP attempt for one batch. It returns exactly
// len(texts) vectors in input order, or an error.
type embedBatchFunc func(ctx context.Context, texts []string) ([][]float32, error)

// batchEmbedder splits the input into batches and retries each one.
type batchEmbedder struct {
	do   embedBatchFunc
	pol  retry.Policy
	hide func(error) error // masks the client's secrets
	size int
}

// Embed implements llm.Embedder.
func (b *batchEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += b.size {
		end := min(start+b.size, len(texts))
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("llm: embeddings: %w", err)
		}
		var vecs [][]float32
		err := retry.Do(ctx, b.pol, "embeddings request", func() error {
			v, err := b.do(ctx, texts[start:end])
			vecs = v
			return b.hide(err)
		})
		if err == nil {
			err = checkVectors(vecs, end-start, out)
		}
		if err != nil {
			return nil, b.hide(fmt.Errorf("llm: embeddings (texts %d-%d of %d): %w", start, end-1, len(texts), err))
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// checkVectors validates one batch's vectors against the expected count and
// the dimension of the vectors already accepted.
func checkVectors(vecs [][]float32, want int, prev [][]float32) error {
	if len(vecs) != want {
		return fmt.Errorf("server returned %d vectors for %d texts", len(vecs), want)
	}
	dim := 0
	if len(prev) > 0 {
		dim = len(prev[0])
	}
	for i, v := range vecs {
		if len(v) == 0 {
			return fmt.Errorf("server returned an empty vector for text %d of the batch", i)
		}
		if dim == 0 {
			dim = len(v)
		}
		if len(v) != dim {
			return fmt.Errorf("server returned vectors of mismatched dimensions (%d and %d)", dim, len(v))
		}
	}
	return nil
}
