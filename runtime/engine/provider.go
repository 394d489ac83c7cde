package engine

import (
	"fmt"
	"time"

	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/llm/anthropic"
	"github.com/openheim/openheim/runtime/llm/gemini"
	"github.com/openheim/openheim/runtime/llm/openai"
	"github.com/openheim/openheim/runtime/llm/replay"
	"github.com/openheim/openheim/runtime/llm/responses"
	"github.com/openheim/openheim/runtime/llm/retry"
	"github.com/openheim/openheim/runtime/llm/transport"
)

// RetryPolicy is the retry policy of every network provider; tests shorten it.
var RetryPolicy = retry.Policy{}

// NewProvider builds the client for a resolved provider. It is the one
// place that picks a wire by kind: a new wire is a package beside
// runtime/llm and one case here.
func NewProvider(r *config.Resolved) (llm.Provider, error) {
	p := r.Provider
	timeout := time.Duration(p.TimeoutSecs) * time.Second
	if p.Kind != config.KindReplay && p.Kind != config.KindOpenAICompatible && r.APIKey == "" {
		return nil, fmt.Errorf("provider %q has no API key: set %s or api_key in the config", r.ProviderName, keySource(p))
	}
	// MaxAnswerBytes and MaxRetryWaitSecs are 0 in a config built in code
	// rather than loaded: the llm packages' defaults then apply.
	cfg := transport.Config{
		BaseURL:             p.APIBase,
		APIKey:              r.APIKey,
		Timeout:             timeout,
		MaxTokens:           p.MaxTokens,
		Thinking:            p.Thinking,
		ThinkingBudget:      p.ThinkingBudget,
		AdaptiveThinking:    p.AdaptiveThinking,
		MaxCompletionTokens: p.Kind == config.KindOpenAI,
		Headers:             p.Headers,
		MaxAnswerBytes:      p.MaxAnswerBytes,
	}
	var client llm.Provider
	switch p.Kind {
	case config.KindOpenAI, config.KindOpenAICompatible:
		client = openai.New(cfg)
	case config.KindAnthropic:
		client = anthropic.New(cfg)
	case config.KindGemini:
		client = gemini.New(cfg)
	case config.KindOpenAIResponses:
		client = responses.New(cfg)
	case config.KindReplay:
		return replay.New(p.Cassette)
	default:
		return nil, fmt.Errorf("provider %q: unknown kind %q", r.ProviderName, p.Kind)
	}
	pol := RetryPolicy
	if p.MaxRetryWaitSecs > 0 {
		pol.MaxWait = time.Duration(p.MaxRetryWaitSecs) * time.Second
	}
	return retry.Wrap(client, pol), nil
}

func keySource(p *config.Provider) string {
	if p.EnvVar != "" {
		return "$" + p.EnvVar
	}
	return "api_key"
}
