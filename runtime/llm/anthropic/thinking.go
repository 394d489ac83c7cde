package anthropic

import (
	"regexp"
	"strings"
	"sync"
)

// Extended thinking has two request forms: {"type":"adaptive"}, where the
// model decides how much to think (Claude Opus 4.6, Sonnet 4.6 and later;
// the only form Opus 4.7 and later accept), and the budget form
// {"type":"enabled","budget_tokens":N}, the only one earlier models know
// and the one the vendor's SDK marks deprecated on recent models.

// adaptiveTable says, by model name, which form thinking = "adaptive"
// sends: the first matching row wins. Names are matched lower-cased with
// "." read as "-", so gateway spellings (anthropic/claude-opus-4.6,
// anthropic.claude-opus-4-1-20250805-v1:0, claude-opus-4-6@20260101)
// match too. A name of no Claude family (an Anthropic-compatible server's
// own model) gets the budget form, the one such servers copy. The provider
// key adaptive_thinking overrides the table. docs/configuration.md shows
// the same table.
var adaptiveTable = sync.OnceValue(func() []adaptiveRow {
	return []adaptiveRow{
		// Claude 3.x and older: claude-3-7-sonnet, claude-3-5-haiku, claude-2.1.
		{regexp.MustCompile(`claude-(instant|[123])(\D|$)`), false},
		// Claude 4 to 4.5 written with a minor: opus-4-1, sonnet-4-5, haiku-4-5.
		{regexp.MustCompile(`(opus|sonnet|haiku)-4-[0-5](\D|$)`), false},
		// Claude 4.0: claude-opus-4-20250514, claude-sonnet-4@20250514, ...-4.
		{regexp.MustCompile(`(opus|sonnet|haiku)-4(-\d{8}|@|$)`), false},
		// Claude 4.6 and later, and the families after it.
		{regexp.MustCompile(`(opus|sonnet|haiku|fable|mythos)`), true},
	}
})

// adaptiveRow is one row of adaptiveTable (compiled on first use, not at
// start-up).
type adaptiveRow struct {
	pattern  *regexp.Regexp
	adaptive bool
}

// takesAdaptive reports whether model takes {"type":"adaptive"}.
func takesAdaptive(model string) bool {
	name := strings.ReplaceAll(strings.ToLower(model), ".", "-")
	for _, row := range adaptiveTable() {
		if row.pattern.MatchString(name) {
			return row.adaptive
		}
	}
	return false
}

// thinkingFor is the request's thinking field, nil for none. mode is
// Config.Thinking; budget is Config.ThinkingBudget (0: 3/4 of maxTokens);
// override is Config.AdaptiveThinking. The budget form needs at least
// anMinThinkingBudget tokens below maxTokens: without that room thinking
// stays off for the call.
func thinkingFor(mode string, model string, maxTokens, budget int, override *bool) *anThinking {
	switch strings.ToLower(strings.TrimSpace(mode)) {
	case "adaptive":
		adaptive := takesAdaptive(model)
		if override != nil {
			adaptive = *override
		}
		if adaptive {
			return &anThinking{Type: "adaptive"}
		}
	case "budget":
	default:
		return nil
	}
	if budget <= 0 {
		budget = maxTokens * 3 / 4
	}
	budget = min(max(budget, anMinThinkingBudget), maxTokens-1)
	if budget < anMinThinkingBudget {
		return nil
	}
	return &anThinking{Type: "enabled", BudgetTokens: budget}
}
