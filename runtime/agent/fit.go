package agent

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/message"
)

// Context-window fitting. Token counts are estimated (about four characters
// a token, as every major tokenizer averages on English and code), so the
// budget keeps a margin: requests aim at 90% of the window.
const (
	fitShare      = 0.90 // of context_window, for every request
	retryShare    = 0.75 // of a rejected request's size, after "context too long"
	maxFitRetries = 2
	charsPerToken = 4
	imageTokens   = 1600 // what a typical screenshot costs
	messageTokens = 4    // role and framing per message
)

// errTurnTooLarge says the current turn cannot be fitted by leaving out
// history: only a new session or a shorter input helps.
var errTurnTooLarge = errors.New("this turn does not fit the model's context window")

// omittedNote starts the kept history when earlier turns were left out.
func omittedNote(n int) string {
	return fmt.Sprintf("[%d earlier messages omitted to fit the context window]", n)
}

// estimateTokens is the estimated size of msgs in tokens.
func estimateTokens(msgs []message.Message) int {
	n := 0
	for _, m := range msgs {
		n += messageTokens
		for _, b := range m.Content {
			switch b.Type {
			case message.TypeImage:
				n += imageTokens
			case message.TypeText:
				n += len(b.Text) / charsPerToken
			case message.TypeThinking:
				n += len(b.Thinking) / charsPerToken
			case message.TypeRedactedThinking:
				n += len(b.Data) / charsPerToken
			case message.TypeToolUse:
				n += (len(b.Name) + len(b.Arguments)) / charsPerToken
			case message.TypeToolResult:
				n += len(b.Content) / charsPerToken
			}
		}
	}
	return n
}

// fixedTokens is the part of every request that fitting cannot shrink.
func fixedTokens(system string, tools []llm.ToolSpec) int {
	b, _ := json.Marshal(tools)
	return (len(system) + len(b)) / charsPerToken
}

// fit returns the messages to send so that fixed + messages stays within
// budget tokens. It leaves out the oldest whole turns, cutting only before a
// user message of an earlier turn (so a tool call is never separated from its
// result), and never touches msgs[turnStart:], the turn being run. The stored
// history is not changed: kept messages are shared, the note is a copy.
func fit(msgs []message.Message, turnStart, fixed, budget int) ([]message.Message, error) {
	total := fixed + estimateTokens(msgs)
	if budget <= 0 || total <= budget {
		return msgs, nil
	}
	current := fixed + estimateTokens(msgs[turnStart:])
	size := total
	for cut := 1; cut <= turnStart; cut++ {
		size -= estimateTokens(msgs[cut-1 : cut])
		if msgs[cut].Role != message.RoleUser {
			continue
		}
		note := omittedNote(cut)
		if size+len(note)/charsPerToken+1 > budget {
			continue
		}
		first := msgs[cut]
		withNote := message.Message{Role: first.Role, Content: append([]message.Block{message.Text(note)}, first.Content...)}
		out := make([]message.Message, 0, len(msgs)-cut)
		out = append(out, withNote)
		return append(out, msgs[cut+1:]...), nil
	}
	return nil, fmt.Errorf("%w (about %d tokens with the prompt and tools; %d fit): start a new session, or shorten the input",
		errTurnTooLarge, current, budget)
}
