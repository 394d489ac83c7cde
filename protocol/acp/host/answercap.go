package host

import (
	"unicode/utf8"

	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/event"
)

// answerCap bounds the text and thoughts an external agent streams in one
// turn by max_answer_bytes, as the engine bounds a model's answer: an agent
// that streams without end (broken, or hostile) costs bounded memory in
// the transcript and the store. Past the cap the rest is dropped and the
// turn is cancelled on the agent; it ends max_tokens.
type answerCap struct {
	limit, used int
	over        bool
	stop        func() // cancels the turn on the agent
}

func newAnswerCap(cfg *config.Config, stop func()) *answerCap {
	limit := config.DefaultMaxAnswerBytes
	if cfg != nil && cfg.MaxAnswerBytes > 0 {
		limit = cfg.MaxAnswerBytes
	}
	return &answerCap{limit: limit, stop: stop}
}

// take returns ev as it may be kept (a chunk cut to what still fits, on a
// character boundary), or false when nothing of it is; the chunk that
// passes the cap cancels the turn.
func (c *answerCap) take(ev event.Event) (event.Event, bool) {
	if (ev.Kind != event.AgentMessageChunk && ev.Kind != event.AgentThoughtChunk) || ev.Content == nil {
		return ev, true
	}
	if c.over {
		return ev, false
	}
	text := ev.Content.Text
	if len(text) <= c.limit-c.used {
		c.used += len(text)
		return ev, true
	}
	n := c.limit - c.used
	for n > 0 && !utf8.RuneStart(text[n]) {
		n--
	}
	c.used, c.over = c.limit, true
	c.stop()
	if n == 0 {
		return ev, false
	}
	b := *ev.Content
	b.Text = text[:n]
	ev.Content = &b
	return ev, true
}
