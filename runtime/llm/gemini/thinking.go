package gemini

import (
	"fmt"
	"strings"
)

// proMinThinkingBudget is the smallest thinkingBudget the Pro models take:
// they cannot turn thinking off, and refuse a budget of 0.
const proMinThinkingBudget = 128

// thinkingConfig is the generationConfig.thinkingConfig for Config.Thinking
// (mode) and Config.ThinkingBudget (budget) on model, nil for none:
//
//	""        nothing: the model's default
//	adaptive  thought summaries streamed, a dynamic budget (-1)
//	budget    thought summaries streamed, budget tokens (0: dynamic)
//	off       thinkingBudget 0, or 128 on the Pro models (their minimum:
//	          they cannot turn thinking off)
func thinkingConfig(mode, model string, budget int) (*gmThinkingConfig, error) {
	switch strings.ToLower(strings.TrimSpace(mode)) {
	case "":
		return nil, nil
	case "off":
		if cannotStopThinking(model) {
			return &gmThinkingConfig{ThinkingBudget: proMinThinkingBudget}, nil
		}
		return &gmThinkingConfig{ThinkingBudget: 0}, nil
	case "adaptive":
		return &gmThinkingConfig{IncludeThoughts: true, ThinkingBudget: -1}, nil
	case "budget":
		if budget <= 0 {
			budget = -1
		}
		return &gmThinkingConfig{IncludeThoughts: true, ThinkingBudget: budget}, nil
	}
	return nil, fmt.Errorf("llm: gemini: unknown thinking mode %q (want \"\", \"adaptive\", \"budget\" or \"off\")", mode)
}

// cannotStopThinking reports whether model is one of the Pro models
// (gemini-2.5-pro, gemini-3-pro-preview, gemini-3.1-pro-preview, and their
// dated or gateway spellings), which think whatever they are asked.
func cannotStopThinking(model string) bool {
	name := strings.ToLower(model)
	return strings.Contains(name, "gemini") && strings.Contains(name, "-pro")
}
