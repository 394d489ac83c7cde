// Package agent is the loop: one turn = prompt -> (LLM -> tools)* -> stop
// reason. It knows nothing of terminals, HTTP or wire formats: it talks to a
// Provider, a tool Registry, an event Sink and a persistence callback.
package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/tools"
)

// DefaultMaxResultBytes caps one tool result fed back to the model.
const DefaultMaxResultBytes = 128 << 10

// CancelledResult is the tool result recorded for a call cut short by the user.
const CancelledResult = "Cancelled by user."

// Agent runs turns. It is safe for concurrent turns on different sessions.
type Agent struct {
	Provider       llm.Provider
	Tools          *tools.Registry
	Model          string
	System         string
	MaxIterations  int   // model calls per turn; default 10
	MaxTokens      int   // per call; 0 leaves it to the provider
	ContextWindow  int64 // for usage_update; 0 if unknown
	MaxResultBytes int   // default DefaultMaxResultBytes
	// Permit decides whether a call may run, given its tool's kind; it is
	// asked after the tool is found and its arguments parse, and before it
	// runs. A refused call fails with permission.DeniedResult. It may block
	// (asking someone) and is called concurrently. nil allows every call.
	Permit func(ctx context.Context, call message.Block, kind string) bool
}

// Turn is one user prompt on a session.
type Turn struct {
	SessionID string
	History   []message.Message // what the session held before this turn
	Input     message.Message   // the user's message
	Sink      event.Sink
	// Persist makes messages durable; called once per step, in order. A
	// failure ends the turn: continuing would lose history.
	Persist func(msgs ...message.Message) error
	// Inbox, when set, hands over user messages that arrived during the
	// turn. They are taken in at each checkpoint: after a step's tool
	// results, before the next model call (never between a tool call and
	// its result, which providers reject).
	Inbox func() []message.Message
}

// Run executes the turn and returns how it ended; it never panics on bad
// model output. Cancelling ctx stops the stream and the running tools.
func (a *Agent) Run(ctx context.Context, t Turn) event.End {
	start := time.Now()
	// Tools run concurrently and emit from their goroutines: Sync is a
	// no-op for a sink that is already safe (a turn's Queue).
	r := &run{Agent: a, turn: t, sink: event.Sync(t.Sink)}
	end := r.loop(ctx)
	end.Duration = time.Since(start)
	return end
}

type run struct {
	*Agent
	turn      Turn
	sink      event.Sink
	msgs      []message.Message
	turnStart int // msgs[turnStart] is this turn's user message
	tools     []llm.ToolSpec
	fixed     int           // estimated tokens of the system prompt and tools
	usage     message.Usage // the last call's
	total     message.Usage // every call's
	iter      int
}

func (r *run) emit(e event.Event) {
	e.SessionID = r.turn.SessionID
	r.sink.Emit(e)
}

func (r *run) persist(msgs ...message.Message) error {
	r.msgs = append(r.msgs, msgs...)
	if r.turn.Persist == nil {
		return nil
	}
	if err := r.turn.Persist(msgs...); err != nil {
		return fmt.Errorf("saving session: %w", err)
	}
	return nil
}

func (r *run) end(reason event.StopReason, err error) event.End {
	return event.End{StopReason: reason, Usage: r.usage, Total: r.total, Iterations: r.iter, Err: err}
}

func (r *run) loop(ctx context.Context) event.End {
	if err := r.begin(); err != nil {
		return r.end(event.StopEndTurn, err)
	}
	maxIter := r.MaxIterations
	if maxIter <= 0 {
		maxIter = 10
	}
	for r.iter < maxIter {
		if ctx.Err() != nil {
			return r.end(event.StopCancelled, nil)
		}
		r.iter++
		resp, streamed, err := r.call(ctx)
		if err != nil {
			// Keep what the user already saw; a cancelled stream is not a failure.
			if streamed != "" {
				if perr := r.persist(message.Message{Role: message.RoleAssistant, Content: []message.Block{message.Text(streamed)}}); perr != nil {
					return r.end(event.StopEndTurn, perr)
				}
			}
			if ctx.Err() != nil {
				return r.end(event.StopCancelled, nil)
			}
			return r.end(event.StopEndTurn, err)
		}
		r.usage = resp.Usage
		r.total = addUsage(r.total, resp.Usage)
		r.emit(event.Event{Kind: event.UsageUpdate, Usage: &event.ContextUsage{Used: resp.Usage.Total(), Size: r.ContextWindow}})
		reply := message.Message{Role: message.RoleAssistant, Content: resp.Content}
		calls := reply.ToolUses()
		if len(calls) == 0 && resp.StopReason == llm.StopPauseTurn {
			// The provider paused a long turn; sending its reply back as
			// the last message lets it carry on where it stopped.
			if err := r.persist(reply); err != nil {
				return r.end(event.StopEndTurn, err)
			}
			continue
		}
		if len(calls) == 0 || resp.StopReason == event.StopMaxTokens || resp.StopReason == event.StopRefusal {
			return r.last(reply, calls, resp.StopReason)
		}
		if err := r.persist(reply); err != nil {
			return r.end(event.StopEndTurn, err)
		}
		results, images := r.runTools(ctx, calls)
		if err := r.persist(message.Message{Role: message.RoleTool, Content: results}); err != nil {
			return r.end(event.StopEndTurn, err)
		}
		if images != nil {
			if err := r.persist(*images); err != nil {
				return r.end(event.StopEndTurn, err)
			}
		}
		if ctx.Err() != nil {
			return r.end(event.StopCancelled, nil)
		}
		if err := r.takeInbox(); err != nil {
			return r.end(event.StopEndTurn, err)
		}
	}
	return r.end(event.StopMaxTurnRequests, nil)
}

// begin sets the turn up: the history it continues (repaired, from the
// last compaction), the tools offered, and the input stored.
func (r *run) begin() error {
	r.msgs = repairHistory(message.SinceCompaction(r.turn.History))
	r.turnStart = len(r.msgs)
	r.msgs = append(r.msgs, r.turn.Input)
	if r.Tools != nil {
		r.tools = r.Tools.Specs()
	}
	r.fixed = fixedTokens(r.System, r.tools)
	if r.turn.Persist != nil {
		if err := r.turn.Persist(r.turn.Input); err != nil {
			return fmt.Errorf("saving session: %w", err)
		}
	}
	return nil
}

// last stores the reply that ends the turn: one without calls, or one cut
// off or refused, whose calls are not run but each get a result (every
// tool_use needs one or the next request is invalid).
func (r *run) last(reply message.Message, calls []message.Block, stop event.StopReason) event.End {
	if err := r.persist(reply); err != nil {
		return r.end(event.StopEndTurn, err)
	}
	if len(calls) > 0 {
		if err := r.persist(notRun(calls, "Not run: the reply was cut off ("+string(stop)+").")); err != nil {
			return r.end(event.StopEndTurn, err)
		}
	}
	return r.end(stopReason(stop), nil)
}

// takeInbox stores and adds the user messages that arrived meanwhile.
func (r *run) takeInbox() error {
	if r.turn.Inbox == nil {
		return nil
	}
	for _, m := range r.turn.Inbox() {
		m.Role = message.RoleUser
		if err := r.persist(m); err != nil {
			return err
		}
	}
	return nil
}

// call streams one model reply, fitting the request into the context
// window; a "context too long" rejection is retried with a request aimed at
// 75% of the rejected size, at most twice.
func (r *run) call(ctx context.Context) (*llm.Response, string, error) {
	budget := 0
	if r.ContextWindow > 0 {
		budget = int(float64(r.ContextWindow) * fitShare)
	}
	for attempt := 0; ; attempt++ {
		msgs, err := fit(r.msgs, r.turnStart, r.fixed, budget)
		if err != nil {
			return nil, "", err
		}
		resp, streamed, err := r.stream(ctx, msgs)
		if err == nil || !errors.Is(err, llm.ErrContextTooLong) || streamed != "" {
			return resp, streamed, err
		}
		if attempt == maxFitRetries {
			return nil, "", fmt.Errorf("%w even after leaving out earlier messages twice: start a new session", err)
		}
		budget = int(float64(r.fixed+estimateTokens(msgs)) * retryShare)
		slog.Warn("the provider rejected the request as too long; retrying with less history", "target_tokens", budget)
	}
}

// stream runs one provider call, forwarding text and thinking as chunks. It
// returns the text streamed so far even on error, so a cut turn keeps it.
func (r *run) stream(ctx context.Context, msgs []message.Message) (*llm.Response, string, error) {
	req := &llm.Request{Model: r.Model, System: r.System, Messages: msgs, MaxTokens: r.MaxTokens, Tools: r.tools}
	var streamed strings.Builder
	resp, err := r.Provider.Stream(ctx, req, func(d llm.Delta) error {
		switch d.Kind {
		case llm.DeltaThinking:
			e := event.Text("", event.AgentThoughtChunk, d.Text)
			e.Summary = d.Summary
			r.emit(e)
		case llm.DeltaToolCall:
			if d.Call != nil {
				r.emit(event.Event{Kind: event.ToolCallStreaming, Index: d.Call.Index, Tool: &event.ToolCallInfo{
					ID: d.Call.ID, Title: d.Call.Name, Kind: r.toolKind(d.Call.Name), Status: event.StatusPending}})
			}
		case llm.DeltaRetry:
			if n := d.Retry; n != nil {
				r.emit(event.Event{Kind: event.Retry, Retry: &event.RetryInfo{Attempt: n.Attempt, MaxRetries: n.MaxRetries,
					Delay: n.Delay, Err: n.Err, Asked: n.Asked}})
			}
		default:
			streamed.WriteString(d.Text)
			r.emit(event.Text("", event.AgentMessageChunk, d.Text))
		}
		return nil
	})
	if err == nil && resp == nil {
		err = errors.New("provider returned no response")
	}
	return resp, streamed.String(), err
}

func addUsage(a, b message.Usage) message.Usage {
	return message.Usage{InputTokens: a.InputTokens + b.InputTokens, OutputTokens: a.OutputTokens + b.OutputTokens,
		CacheReadTokens: a.CacheReadTokens + b.CacheReadTokens, CacheCreationTokens: a.CacheCreationTokens + b.CacheCreationTokens}
}

// stopReason is how a turn whose last call stopped for s ends: the call's
// own reason, unless it is one that never ends a turn (tool_use).
func stopReason(s event.StopReason) event.StopReason {
	switch s {
	case event.StopMaxTokens, event.StopRefusal:
		return s
	}
	return event.StopEndTurn
}
