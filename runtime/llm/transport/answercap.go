package transport

import (
	"errors"
	"log/slog"
	"unicode/utf8"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm"
)

// DefaultMaxAnswerBytes caps one answer when a client's MaxAnswerBytes is
// zero: 4 MiB, far above any real reply (a 64k-token answer is ~256 KiB).
const DefaultMaxAnswerBytes = 4 << 20

// ErrAnswerCap stops a decoder once the answer passed its cap. It never
// leaves the wire package: the decoder turns it into a max_tokens Response
// with AnswerCap.Capped.
var ErrAnswerCap = errors.New("llm: the answer passed max_answer_bytes")

// AnswerCap bounds one model call's answer: its text, thinking and tool-call
// arguments, plus what else a server could repeat without limit (call ids
// and names, signatures). The decoders check each fragment before keeping
// it, so memory stays bounded however much the server streams.
type AnswerCap struct {
	limit, used int // limit < 0: no cap
}

// NewAnswerCap makes the cap of one call: limit bytes, DefaultMaxAnswerBytes
// when zero, none when negative.
func NewAnswerCap(limit int) *AnswerCap {
	if limit == 0 {
		limit = DefaultMaxAnswerBytes
	}
	return &AnswerCap{limit: limit}
}

// Take returns the part of s that still fits, cut on a UTF-8 boundary, and
// ErrAnswerCap when that is not all of it.
func (c *AnswerCap) Take(s string) (string, error) {
	if c.limit < 0 || len(s) <= c.limit-c.used {
		c.used += len(s)
		return s, nil
	}
	n := max(c.limit-c.used, 0)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	c.used = c.limit
	return s[:n], ErrAnswerCap
}

// Charge counts n bytes that are kept whole or not at all.
func (c *AnswerCap) Charge(n int) error {
	if c.limit < 0 || n <= c.limit-c.used {
		c.used += n
		return nil
	}
	c.used = c.limit
	return ErrAnswerCap
}

// Capped turns a decoder's partial response into the answer of a call cut
// by the cap: what came before it, ending as max_tokens, which ends the
// turn like an answer cut by the model's own token limit.
func (c *AnswerCap) Capped(resp *llm.Response) *llm.Response {
	slog.Warn("llm: the model's answer passed max_answer_bytes; it was cut there and the call stopped",
		"max_answer_bytes", c.limit)
	resp.StopReason = event.StopMaxTokens
	return resp
}
