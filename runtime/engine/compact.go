package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/openheim/openheim/runtime/agent"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/message"
)

// compactSystem and compactAsk make the model write the summary turns
// continue from.
const (
	compactSystem = "You write a compact, faithful summary of a conversation between a user and a coding agent, " +
		"so that the agent can continue the work from the summary alone."
	compactAsk = "Summarise the conversation above for yourself to continue from: the user's goals and requests, " +
		"decisions made and why, files and commands involved, results of tool calls that still matter, " +
		"and what is open or next. Be concise; use short sections or bullet points; no preamble."
	// CompactPrefix starts a stored summary, so any reader sees what it is.
	CompactPrefix = "Summary of the conversation so far:\n\n"
	compactAck    = "Understood. I will continue from this summary."
)

// ErrNothingToCompact is returned for a session too short to summarise.
var ErrNothingToCompact = errors.New("nothing to compact: the session has no history since its last summary")

// Compact summarises session req.SessionID's history with its model (or
// req's) and stores the summary as a compaction message, followed by the
// model's acknowledgement: later turns send the history from the summary
// on. The full transcript stays in the session. Committed events go to
// req.Sink. It runs the stages of a turn that Prompt does, with the
// summary call in place of the loop.
func (e *Engine) Compact(ctx context.Context, req Request) (event.End, error) {
	meta, err := e.open(req.SessionID)
	if err != nil {
		return event.End{}, err
	}
	resolved, provider, err := e.providerFor(req, meta)
	if err != nil {
		return event.End{}, err
	}
	ctx, h, err := e.hold(ctx, meta, false)
	if err != nil {
		return event.End{}, err
	}
	defer h.release()
	since := message.SinceCompaction(h.history)
	if len(since) < 2 {
		return event.End{}, ErrNothingToCompact
	}
	start := e.now()
	summary, usage, err := summarise(ctx, provider, resolved.Model, since)
	if h.lease.Err() != nil {
		return LeaseEnd(event.End{}, h.lease), nil
	}
	if err != nil {
		if ctx.Err() != nil {
			return event.End{StopReason: event.StopCancelled}, nil
		}
		return event.End{StopReason: event.StopEndTurn, Err: fmt.Errorf("compacting: %w", err)}, nil
	}
	pair := []message.Message{
		{Role: message.RoleUser, Content: []message.Block{message.Text(CompactPrefix + summary)}, Compaction: true},
		{Role: message.RoleAssistant, Content: []message.Block{message.Text(compactAck)}},
	}
	if err := h.store.Append(h.meta.ID, pair...); err != nil {
		if h.lease.Err() != nil {
			return LeaseEnd(event.End{}, h.lease), nil
		}
		return event.End{}, err
	}
	if req.Sink != nil {
		req.Sink.Emit(event.Event{SessionID: h.meta.ID, Kind: event.Committed, Messages: pair, Index: len(h.history)})
	}
	h.meta.AddUsage(resolved.ProviderName+"/"+resolved.Model, usage)
	if _, err := e.save(h); err != nil {
		if h.lease.Err() != nil {
			return LeaseEnd(event.End{}, h.lease), nil
		}
		return event.End{}, err
	}
	return event.End{StopReason: event.StopEndTurn, Usage: usage, Total: usage, Iterations: 1, Duration: e.now().Sub(start)}, nil
}

// summarise asks the model for the summary of msgs; a history too long for
// the context window is cut from the front, by halves, until it fits.
func summarise(ctx context.Context, p llm.Provider, model string, msgs []message.Message) (string, message.Usage, error) {
	for {
		var text strings.Builder
		history := append(agent.RepairHistory(msgs), message.Message{Role: message.RoleUser, Content: []message.Block{message.Text(compactAsk)}})
		resp, err := p.Stream(ctx, &llm.Request{Model: model, System: compactSystem, Messages: history}, func(d llm.Delta) error {
			if d.Kind == llm.DeltaText {
				text.WriteString(d.Text)
			}
			return nil
		})
		if errors.Is(err, llm.ErrContextTooLong) && len(msgs) > 2 {
			msgs = msgs[len(msgs)/2:]
			for len(msgs) > 2 && msgs[0].Role != message.RoleUser {
				msgs = msgs[1:] // the history starts with the user, and a result needs its call
			}
			continue
		}
		if err != nil {
			return "", message.Usage{}, err
		}
		if strings.TrimSpace(text.String()) == "" {
			return "", resp.Usage, errors.New("the model returned an empty summary")
		}
		return strings.TrimSpace(text.String()), resp.Usage, nil
	}
}
