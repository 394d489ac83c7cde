package engine

import (
	"errors"
	"fmt"
	"time"

	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/llm/embedding"
)

// ErrNoEmbeddings means memory.embedding_provider is not set: memory search
// is keyword-only.
var ErrNoEmbeddings = errors.New("no embedding provider configured (memory.embedding_provider)")

// NewEmbedder builds the embeddings client named by the config's memory
// section, with the same keys, headers, timeout and retry policy as the
// provider's chat client.
func NewEmbedder(cfg *config.Config) (llm.Embedder, error) {
	name := cfg.Memory.EmbeddingProvider
	if name == "" {
		return nil, ErrNoEmbeddings
	}
	r, err := cfg.Resolve(name, "")
	if err != nil {
		return nil, fmt.Errorf("memory.embedding_provider: %w", err)
	}
	p := r.Provider
	// Without a key every search would call the endpoint to be refused.
	if r.APIKey == "" && p.Kind != config.KindOpenAICompatible {
		return nil, fmt.Errorf("memory.embedding_provider %q has no API key: set %s", name, keySource(p))
	}
	return embedding.New(embedding.Config{
		Kind:    p.Kind,
		BaseURL: p.APIBase,
		APIKey:  r.APIKey,
		Model:   cfg.Memory.EmbeddingModel,
		Timeout: time.Duration(p.TimeoutSecs) * time.Second,
		Retry:   RetryPolicy,
		Headers: p.Headers,
	})
}
