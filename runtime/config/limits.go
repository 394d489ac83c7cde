package config

import "github.com/BurntSushi/toml"

// Defaults of the provider limits, set at the top level and overridable per
// provider. Keep them in step with transport.DefaultMaxAnswerBytes and
// retry.DefaultMaxWait (runtime/llm), which apply when a caller passes none.
const (
	// DefaultMaxAnswerBytes caps one model answer (the text, thinking
	// and tool-call arguments of one call): 4 MiB.
	DefaultMaxAnswerBytes = 4 << 20
	// DefaultMaxRetryWaitSecs is the longest wait before retrying a
	// request; a server asking for longer (Retry-After) fails the call.
	DefaultMaxRetryWaitSecs = 60
)

// validateLimits checks max_answer_bytes and max_retry_wait_secs at the top
// level, then gives each provider that does not set its own the top-level
// value. Zero is refused rather than read as "unlimited" or "never wait":
// an unbounded answer is what the cap exists to prevent, and a limit
// nobody can satisfy is a typo.
func (c *Config) validateLimits(isSet func(...string) bool) error {
	if c.MaxAnswerBytes < 1 {
		return keyErr("max_answer_bytes", "must be at least 1 (got %d; default %d, 4 MiB)", c.MaxAnswerBytes, DefaultMaxAnswerBytes)
	}
	if c.MaxRetryWaitSecs < 1 {
		return keyErr("max_retry_wait_secs", "must be at least 1 (got %d; default %d)", c.MaxRetryWaitSecs, DefaultMaxRetryWaitSecs)
	}
	for _, name := range sortedKeys(c.Providers) {
		p := c.Providers[name]
		key := func(k string) string { return toml.Key{"providers", name, k}.String() }
		switch {
		case !isSet("providers", name, "max_answer_bytes"):
			p.MaxAnswerBytes = c.MaxAnswerBytes
		case p.MaxAnswerBytes < 1:
			return keyErr(key("max_answer_bytes"), "must be at least 1 (got %d; unset: the top-level max_answer_bytes)", p.MaxAnswerBytes)
		}
		switch {
		case !isSet("providers", name, "max_retry_wait_secs"):
			p.MaxRetryWaitSecs = c.MaxRetryWaitSecs
		case p.MaxRetryWaitSecs < 1:
			return keyErr(key("max_retry_wait_secs"), "must be at least 1 (got %d; unset: the top-level max_retry_wait_secs)", p.MaxRetryWaitSecs)
		}
	}
	return nil
}
