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
	timeout := time.Duration(p.TimeoutSecs) * time.Second
	if p.Kind != config.KindReplay && p.Kind != config.KindOpenAICompatible && r.APIKey == "" {
		return nil, fmt.Errorf("provider %q has no API key: set %s or api_key in the config", r.ProviderName, keySource(p))
	}
	// MaxAnswerBytes and MaxRetryWaitSecs are 0 in a config built in code
	// rather than loaded: the llm package's defaults then apply.
	var client llm.Provider
	switch p.Kind {
	case config.KindOpenAI, config.KindOpenAICompatible:
		client = llm.NewOpenAI(llm.OpenAIConfig{
			BaseURL:             p.APIBase,
			APIKey:              r.APIKey,
			Timeout:             timeout,
			MaxTokens:           p.MaxTokens,
			MaxCompletionTokens: p.Kind == config.KindOpenAI,
			Headers:             p.Headers,
			MaxAnswerBytes:      p.MaxAnswerBytes,
		})
	case config.KindAnthropic:
		client = llm.NewAnthropic(llm.AnthropicConfig{
			BaseURL:        p.APIBase,
			APIKey:         r.APIKey,
			Timeout:        timeout,
			MaxTokens:      p.MaxTokens,
			Thinking:       p.Thinking,
			Headers:        p.Headers,
			MaxAnswerBytes: p.MaxAnswerBytes,
		})
	case config.KindGemini:
		client = llm.NewGemini(llm.GeminiConfig{
			BaseURL:        p.APIBase,
			APIKey:         r.APIKey,
			Timeout:        timeout,
			MaxTokens:      p.MaxTokens,
			Thinking:       p.Thinking,
			Headers:        p.Headers,
			MaxAnswerBytes: p.MaxAnswerBytes,
		})
	case config.KindReplay:
		return llm.NewReplay(p.Cassette)
	default:
		return nil, fmt.Errorf("provider %q: unknown kind %q", r.ProviderName, p.Kind)
	}
	pol := RetryPolicy
	if p.MaxRetryWaitSecs > 0 {
		pol.MaxWait = time.Duration(p.MaxRetryWaitSecs) * time.Second
	}
	return llm.WithRetry(client, pol), nil
}

func keySource(p *config.Provider) string {
	if p.EnvVar != "" {
		return "$" + p.EnvVar
	}
	return "api_key"
}
