package engine

import (
	"fmt"
	"time"

	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/llm"
)

// RetryPolicy is the retry policy of every network provider; tests shorten it.
var RetryPolicy = llm.RetryPolicy{}

// NewProvider builds the client for a resolved provider.
func NewProvider(r *config.Resolved) (llm.Provider, error) {
	p := r.Provider
	switch p.Kind {
	case "openai", "openai_compatible":
		if p.Kind == "openai" && r.APIKey == "" {
			return nil, fmt.Errorf("provider %q has no API key: set %s or api_key in the config", r.ProviderName, keySource(p))
		}
		return llm.WithRetry(llm.NewOpenAI(llm.OpenAIConfig{
			BaseURL:             p.APIBase,
			APIKey:              r.APIKey,
			Timeout:             time.Duration(p.TimeoutSecs) * time.Second,
			MaxTokens:           p.MaxTokens,
			MaxCompletionTokens: p.Kind == "openai",
		}), RetryPolicy), nil
	case "replay":
		return llm.NewReplay(p.Cassette)
	}
	return nil, fmt.Errorf("provider %q: kind %q is not supported yet by this build (supported: openai, openai_compatible, replay)", r.ProviderName, p.Kind)
}

func keySource(p *config.Provider) string {
	if p.EnvVar != "" {
		return "$" + p.EnvVar
	}
	return "env_var"
}
