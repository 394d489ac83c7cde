package responses

import (
	"regexp"
	"strings"
	"sync"
)

// reasoningModel matches the names of OpenAI's reasoning models: the o
// series (o1, o3, o4-mini), gpt-5 and later (not the gpt-5-chat models),
// codex models and gpt-oss, also behind a gateway prefix (openai/gpt-5).
// Only they take the reasoning parameter and return encrypted reasoning;
// the others (gpt-4o, gpt-4.1) reject both. docs/configuration.md shows the
// same table.
var reasoningModel = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(^|/)(o\d|gpt-([5-9]|\d\d)|gpt-oss|codex)`) })

var chatModel = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(^|/)gpt-[\d.]+-chat`) })

// reasoningFor reports whether to ask for reasoning summaries and the
// encrypted reasoning items: for thinking "", "adaptive" or "budget" (the
// API has no token budget; the model decides) on a reasoning model, never
// for "off". override (Config.AdaptiveThinking) replaces the model table.
func reasoningFor(mode, model string, override *bool) bool {
	if strings.EqualFold(strings.TrimSpace(mode), "off") {
		return false
	}
	if override != nil {
		return *override
	}
	name := strings.ToLower(model)
	return reasoningModel().MatchString(name) && !chatModel().MatchString(name)
}
