package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/openheim/openheim/runtime/redact"
)

// Embedder turns texts into vectors for semantic search.
type Embedder interface {
	// Embed returns one vector per text, in input order. All vectors of one
	// call have the same, non-zero dimension. No texts means no request and
	// an empty result.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// ErrNoEmbeddingAPI is wrapped by NewEmbedder's error for a provider kind
// that cannot embed (anthropic) or that it does not know.
var ErrNoEmbeddingAPI = errors.New("no embeddings API")

// Batch sizes: what one request carries. Gemini's batchEmbedContents accepts
// at most 100 requests per call.
const (
	DefaultOpenAIEmbedBatch = 96
	MaxGeminiEmbedBatch     = 100
)

// EmbedConfig configures NewEmbedder.
type EmbedConfig struct {
	// Kind is "openai", "openai_compatible" or "gemini"; "anthropic" (which
	// has no embeddings API) and anything else are refused.
	Kind string
	// BaseURL: for OpenAI-style kinds up to and including /v1 (default
	// DefaultOpenAIBaseURL); for gemini up to and including /v1beta
	// (default https://generativelanguage.googleapis.com/v1beta).
	BaseURL string
	// APIKey is sent as a Bearer token (OpenAI-style, when set) or in the
	// x-goog-api-key header (gemini), never in the URL.
	APIKey string
	Model  string // required; for gemini with or without "models/"
	// Timeout bounds each HTTP attempt as a whole. Zero means
	// DefaultTimeout, negative disables it.
	Timeout time.Duration
	// BatchSize is how many texts go in one request. Zero or negative:
	// DefaultOpenAIEmbedBatch, or MaxGeminiEmbedBatch for gemini, which is
	// also the cap for gemini.
	BatchSize int
	// Retry applies to each batch, with WithRetry's semantics.
	Retry RetryPolicy
	// HTTPClient replaces the default client; Timeout still applies.
	HTTPClient *http.Client
	Headers    map[string]string // extra headers, e.g. for a gateway
}

// NewEmbedder returns the Embedder for cfg.Kind. The result is safe for
// concurrent use.
func NewEmbedder(cfg EmbedConfig) (Embedder, error) {
	kind := strings.ToLower(strings.TrimSpace(cfg.Kind))
	const hint = "set memory.embedding_provider to an OpenAI-compatible or Gemini provider"
	switch kind {
	case "openai", "openai_compatible", "gemini":
	case "anthropic":
		return nil, fmt.Errorf("llm: provider kind %q has %w; %s", cfg.Kind, ErrNoEmbeddingAPI, hint)
	default:
		return nil, fmt.Errorf("llm: unknown provider kind %q has %w; %s", cfg.Kind, ErrNoEmbeddingAPI, hint)
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, fmt.Errorf("llm: embeddings: no model configured for provider kind %q", cfg.Kind)
	}
	h := newEmbedHTTP(cfg)
	b := &batchEmbedder{pol: cfg.Retry.withDefaults(), red: h.red, size: cfg.BatchSize}
	if kind == "gemini" {
		if b.size <= 0 || b.size > MaxGeminiEmbedBatch {
			b.size = MaxGeminiEmbedBatch
		}
		b.do = newGeminiEmbed(cfg, h)
	} else {
		if b.size <= 0 {
			b.size = DefaultOpenAIEmbedBatch
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
	pol  RetryPolicy
	red  *redact.Redactor
	size int
}

// Embed implements Embedder.
func (b *batchEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += b.size {
		end := min(start+b.size, len(texts))
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("llm: embeddings: %w", err)
		}
		var vecs [][]float32
		err := retryDo(ctx, b.pol, "embeddings request", func() error {
			v, err := b.do(ctx, texts[start:end])
			vecs = v
			return hide(err, b.red)
		})
		if err == nil {
			err = checkVectors(vecs, end-start, out)
		}
		if err != nil {
			return nil, hide(fmt.Errorf("llm: embeddings (texts %d-%d of %d): %w", start, end-1, len(texts), err), b.red)
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

// retryDo calls fn until it succeeds, fails for good, or MaxRetries retries
// are spent, with the same decisions and backoff as WithRetry: Retryable
// errors only, Retry-After honoured up to MaxWait, jittered exponential delay,
// and no retry once ctx is done. pol must have its defaults applied.
func retryDo(ctx context.Context, pol RetryPolicy, what string, fn func() error) error {
	for attempt := 0; ; attempt++ {
		err := fn()
		if err == nil || attempt >= pol.MaxRetries || !Retryable(err) || ctx.Err() != nil {
			return err
		}
		if err := pol.wait(ctx, attempt, what, err); err != nil {
			return err
		}
	}
}

// maxEmbedResponse bounds a success body: 100 vectors of 4096 floats in
// JSON are about 10 MB.
const maxEmbedResponse = 64 << 20

// embedHTTP is the JSON-over-HTTP plumbing both wires share.
type embedHTTP struct {
	client  *http.Client
	timeout time.Duration
	red     *redact.Redactor
}

func newEmbedHTTP(cfg EmbedConfig) *embedHTTP {
	h := &embedHTTP{client: cfg.HTTPClient, timeout: cfg.Timeout, red: secretsOf(cfg.APIKey, cfg.BaseURL, cfg.Headers)}
	if h.timeout == 0 {
		h.timeout = DefaultTimeout
	}
	if h.client == nil {
		h.client = newHTTPClient(h.timeout)
	}
	return h
}

// postJSON sends in as JSON to endpoint with the auth headers, and decodes a 2xx
// answer into out. Other answers become a *StatusError.
func (h *embedHTTP) postJSON(ctx context.Context, endpoint string, auth http.Header, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("encoding request: %w", err)
	}
	reqCtx := ctx
	if h.timeout > 0 {
		var cancel context.CancelFunc
		reqCtx, cancel = context.WithTimeoutCause(ctx, h.timeout, &timeoutError{phase: "embeddings request", d: h.timeout})
		defer cancel()
	}
	// fail reports the caller's cancellation or our timeout in place of
	// the transport error they caused.
	fail := func(err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var te *timeoutError
		if errors.As(context.Cause(reqCtx), &te) {
			return te
		}
		return err
	}

	hreq, err := http.NewRequestWithContext(reqCtx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return err
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	for k, vs := range auth {
		hreq.Header[k] = vs
	}
	hresp, err := h.client.Do(hreq)
	if err != nil {
		return fail(err)
	}
	defer hresp.Body.Close()

	if hresp.StatusCode < 200 || hresp.StatusCode > 299 {
		msg, rerr := io.ReadAll(io.LimitReader(hresp.Body, 64<<10))
		if rerr != nil && (ctx.Err() != nil || context.Cause(reqCtx) != nil) {
			return fail(rerr)
		}
		return &StatusError{
			Status:     hresp.StatusCode,
			Body:       truncate(h.red.String(strings.TrimSpace(string(msg))), maxErrorBody),
			RetryAfter: parseRetryAfter(hresp.Header.Get("Retry-After"), time.Now()),
		}
	}
	raw, err := io.ReadAll(io.LimitReader(hresp.Body, maxEmbedResponse+1))
	if err != nil {
		return fail(fmt.Errorf("reading the response: %w", err))
	}
	if len(raw) > maxEmbedResponse {
		return fmt.Errorf("response larger than %d bytes", maxEmbedResponse)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("decoding the response: %w: %s", err,
			truncate(h.red.String(strings.TrimSpace(string(raw))), 300))
	}
	return nil
}
