package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/runtime/event"
)

// TurnHandle is a running prompt on an external agent (seed 002): its
// events, in order, in openheim's one event stream, and its completion.
// Events is closed before Completion delivers.
type TurnHandle struct {
	TurnID     string
	Events     <-chan event.Event
	Completion <-chan TurnResult
}

// TurnResult is how a turn ended.
type TurnResult struct {
	Completion TurnCompletion
	Err        error
}

// TurnCompletion is a finished turn.
type TurnCompletion struct {
	TurnID     string
	OutputText string
	StopReason event.StopReason
	Usage      *acp.Usage
}

// turnEventBuffer bounds the events waiting for a slow consumer (text
// merges, other events are dropped and counted, as event.Queue does).
const turnEventBuffer = 4096

type hostTurn struct {
	id     string
	s      *hostSession
	queue  *event.Queue
	output strings.Builder
	mu     sync.Mutex
	// asks is done once the turn is cancelled: the permission requests
	// still open are then answered cancelled.
	asks       context.Context
	cancelAsks context.CancelFunc
	// allowed are the paths the agent's permission requests were allowed
	// to touch in this turn: its fs/* requests on them are not asked
	// about again (gateFS).
	allowed map[string]bool
	// callEnded is signalled when one of the turn's tool calls ends (see
	// awaitCalls).
	callEnded chan struct{}
}

func (t *hostTurn) emit(ev event.Event) {
	if ev.Kind == event.AgentMessageChunk && ev.Content != nil {
		t.mu.Lock()
		t.output.WriteString(ev.Content.Text)
		t.mu.Unlock()
	}
	t.queue.Emit(ev)
}

var turnSeq atomic.Int64

// Prompt sends a prompt to session id and returns at once; the turn runs
// until the agent answers. Cancelling ctx sends session/cancel (the agent
// then answers stopReason cancelled). One turn per session at a time.
func (h *Host) Prompt(ctx context.Context, id string, prompt []acp.ContentBlock) (*TurnHandle, error) {
	s := h.session(id)
	if s == nil {
		return nil, fmt.Errorf("acp agent %s: no open session %q", h.spec.Name, id)
	}
	events := make(chan event.Event, 64)
	done := make(chan TurnResult, 1)
	t := &hostTurn{id: fmt.Sprintf("turn-%d", turnSeq.Add(1)), s: s, callEnded: make(chan struct{}, 1)}
	t.asks, t.cancelAsks = context.WithCancel(context.Background())
	var drops atomic.Int64
	t.queue = event.NewQueue(event.SinkFunc(func(ev event.Event) {
		if ev.Kind == event.Dropped {
			drops.Add(int64(ev.Count))
			h.hook(EventDrop{SessionID: id, TurnID: t.id, EventType: "update"})
		}
		events <- ev
	}), turnEventBuffer)
	s.mu.Lock()
	if s.turn != nil {
		s.mu.Unlock()
		return nil, fmt.Errorf("acp agent %s: session %s already runs a turn", h.spec.Name, id)
	}
	s.turn = t
	s.recordPrompt(t.id, prompt)
	s.mu.Unlock()
	start := time.Now()
	h.hook(TurnEvent{Type: "started", SessionID: id, TurnID: t.id})
	go func() {
		stop := context.AfterFunc(ctx, func() { h.Cancel(id) })
		var resp acp.PromptResponse
		// The call itself is not tied to ctx: after session/cancel the
		// agent still answers (stopReason cancelled), and that answer
		// ends the turn.
		err := h.promptCall(id, prompt, &resp)
		stop()
		if err == nil && resp.StopReason != event.StopCancelled {
			s.awaitCalls(t, lateCallGrace)
		}
		t.cancelAsks()
		s.mu.Lock()
		s.turn = nil
		refused := s.endRefused(t.id)
		s.mu.Unlock()
		for _, ev := range refused {
			t.emit(ev)
		}
		h.terms.releaseSession(id) // a turn's terminals end with it
		t.queue.Close()
		close(events)
		res := TurnResult{Err: err}
		t.mu.Lock()
		res.Completion = TurnCompletion{TurnID: t.id, OutputText: t.output.String(), StopReason: resp.StopReason, Usage: resp.Usage}
		t.mu.Unlock()
		kind := "completed"
		switch {
		case err != nil:
			kind = "failed"
		case resp.StopReason == event.StopCancelled:
			kind = "cancelled"
		}
		h.hook(TurnEvent{Type: kind, SessionID: id, TurnID: t.id, Duration: time.Since(start), Err: err})
		done <- res
	}()
	return &TurnHandle{TurnID: t.id, Events: events, Completion: done}, nil
}

// promptCall sends session/prompt and decodes the answer leniently (an
// odd usage must not cost the stop reason).
func (h *Host) promptCall(id string, prompt []acp.ContentBlock, resp *acp.PromptResponse) error {
	var raw json.RawMessage
	if err := h.call(context.Background(), acp.MethodSessionPrompt, acp.PromptRequest{SessionID: id, Prompt: prompt}, &raw); err != nil {
		return err
	}
	if err := acp.DecodeLenient(raw, resp); err != nil {
		h.protocolError(acp.MethodSessionPrompt+" result", id, raw, err)
		if !acp.Partial(err) {
			return fmt.Errorf("acp agent %s: session/prompt answered %s: %w", h.spec.Name, abbreviate(raw), err)
		}
	}
	return nil
}

// abbreviate cuts a raw message for an error.
func abbreviate(raw json.RawMessage) string {
	if len(raw) > 200 {
		return string(raw[:200]) + "…"
	}
	return string(raw)
}

// askContext is ctx, also done once the session's running turn is
// cancelled (ctx itself when no turn runs).
func (s *hostSession) askContext(ctx context.Context) (context.Context, context.CancelFunc) {
	s.mu.Lock()
	t := s.turn
	s.mu.Unlock()
	if t == nil {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(t.asks, cancel)
	return ctx, func() { stop(); cancel() }
}

// Cancel asks the agent to stop session id's running turn; the
// permission requests of the turn still open are answered cancelled.
func (h *Host) Cancel(id string) {
	if s := h.session(id); s != nil {
		s.mu.Lock()
		if s.turn != nil {
			s.turn.cancelAsks()
		}
		s.mu.Unlock()
	}
	if err := h.peer.Notify(acp.MethodSessionCancel, acp.CancelNotification{SessionID: id}); err != nil {
		h.log.Debug("acp host: session/cancel not sent", "err", err)
	}
}

// IsAuthRequired reports whether err is an agent's authentication error.
func IsAuthRequired(err error) bool {
	var a *AuthRequiredError
	return errors.As(err, &a)
}
