package llm

import (
	"errors"
	"log/slog"
	"unicode/utf8"
)

// DefaultMaxAnswerBytes caps one answer when a client's MaxAnswerBytes is
// zero: 4 MiB, far above any real reply (a 64k-token answer is ~256 KiB).
const DefaultMaxAnswerBytes = 4 << 20

// errAnswerCap stops a decoder once the answer passed its cap. It never
// leaves this package: the decoder turns it into a max_tokens Response.
var errAnswerCap = errors.New("llm: the answer passed max_answer_bytes")

// answerCap bounds one model call's answer: its text, thinking and tool-call
// arguments, plus what else a server could repeat without limit (call ids
// and names, signatures). The decoders check each fragment before keeping
// it, so memory stays bounded however much the server streams.
type answerCap struct {
	limit, used int // limit < 0: no cap
}

// newAnswerCap makes the cap of one call: limit bytes, DefaultMaxAnswerBytes
// when zero, none when negative.
func newAnswerCap(limit int) *answerCap {
	if limit == 0 {
		limit = DefaultMaxAnswerBytes
	}
	return &answerCap{limit: limit}
}

// take returns the part of s that still fits, cut on a UTF-8 boundary, and
// errAnswerCap when that is not all of it.
func (c *answerCap) take(s string) (string, error) {
	if c.limit < 0 || len(s) <= c.limit-c.used {
		c.used += len(s)
		return s, nil
	}
	n := max(c.limit-c.used, 0)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	c.used = c.limit
	return s[:n], errAnswerCap
}

// charge counts n bytes that are kept whole or not at all.
func (c *answerCap) charge(n int) error {
	if c.limit < 0 || n <= c.limit-c.used {
		c.used += n
		return nil
	}
	c.used = c.limit
	return errAnswerCap
}

// capped turns a decoder's partial response into the answer of a call cut
// by the cap: what came before it, ending as max_tokens, which ends the
// turn like an answer cut by the model's own token limit.
func (c *answerCap) capped(resp *Response) *Response {
	slog.Warn("llm: the model's answer passed max_answer_bytes; it was cut there and the call stopped",
		"max_answer_bytes", c.limit)
	resp.StopReason = StopMaxTokens
	return resp
}
