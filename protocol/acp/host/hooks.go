package host

import (
	"sync/atomic"
	"time"
)

// Hooks are best-effort callbacks for operational signals (seed 002's
// RuntimeHooks). They must not block; nil fields are skipped. Every signal
// is also logged at debug level and counted (Host.Stats).
type Hooks struct {
	OnSessionEvent func(SessionEvent)
	OnTurnEvent    func(TurnEvent)
	OnProcessEvent func(ProcessEvent)
	OnEventDrop    func(EventDrop)
	// OnProtocolError gets every message of the agent's that did not
	// decode, whole or in part (seed 002's ObservabilityOptions
	// OnProtocolError); each is also logged as a warning (protoerr.go).
	OnProtocolError func(ProtocolError)
}

// SessionEvent: created, loaded, resumed, forked, closed, deleted.
type SessionEvent struct {
	Type      string
	SessionID string
	Agent     string
	Err       error
}

// TurnEvent: started, completed, failed, cancelled, coalesced (a prompt
// joined the next turn: QueuePolicy).
type TurnEvent struct {
	Type      string
	SessionID string
	TurnID    string
	Duration  time.Duration
	Err       error
}

// ProcessEvent: spawn, teardown, force_kill, wait_timeout.
type ProcessEvent struct {
	Type    string
	Command string
	Err     error
}

// EventDrop says a turn's consumer was too slow and an update was dropped.
type EventDrop struct {
	SessionID string
	TurnID    string
	EventType string
}

// Stats counts the signals.
type Stats struct {
	Sessions, Turns, Processes, Drops, ProtocolErrors int64
}

type hostStats struct{ sessions, turns, processes, drops, protocolErrors atomic.Int64 }

// Stats returns the counters.
func (h *Host) Stats() Stats {
	return Stats{h.stats.sessions.Load(), h.stats.turns.Load(), h.stats.processes.Load(), h.stats.drops.Load(),
		h.stats.protocolErrors.Load()}
}

// hook delivers a signal: counted, logged, then handed to the host's hook.
func (h *Host) hook(e any) {
	defer func() {
		if r := recover(); r != nil {
			h.log.Warn("acp host: a hook panicked", "panic", r)
		}
	}()
	switch e := e.(type) {
	case SessionEvent:
		h.stats.sessions.Add(1)
		h.log.Debug("acp host: session", "type", e.Type, "session", e.SessionID, "err", e.Err)
		if f := h.opts.Hooks.OnSessionEvent; f != nil {
			f(e)
		}
	case TurnEvent:
		h.stats.turns.Add(1)
		h.log.Debug("acp host: turn", "type", e.Type, "session", e.SessionID, "turn", e.TurnID, "duration", e.Duration, "err", e.Err)
		if f := h.opts.Hooks.OnTurnEvent; f != nil {
			f(e)
		}
	case ProcessEvent:
		h.stats.processes.Add(1)
		h.log.Debug("acp host: process", "type", e.Type, "command", e.Command, "err", e.Err)
		if f := h.opts.Hooks.OnProcessEvent; f != nil {
			f(e)
		}
	case ProtocolError:
		h.stats.protocolErrors.Add(1)
		h.warnProtocol(e)
		if f := h.opts.Hooks.OnProtocolError; f != nil {
			f(e)
		}
	case EventDrop:
		h.stats.drops.Add(1)
		h.log.Debug("acp host: event dropped", "session", e.SessionID, "turn", e.TurnID, "event", e.EventType)
		if f := h.opts.Hooks.OnEventDrop; f != nil {
			f(e)
		}
	}
}

// Read-model defaults (seed 002): zero means the default, negative means
// unlimited.
const (
	DefaultMaxThreadEntries     = 256
	DefaultMaxToolCallEntries   = 128
	DefaultMaxPermissionEntries = 64
)

// ReadModelLimits bound what a host keeps in memory per session.
type ReadModelLimits struct {
	MaxThreadEntries     int
	MaxToolCallEntries   int
	MaxPermissionEntries int
}

func limitOr(v, def int) int {
	switch {
	case v == 0:
		return def
	case v < 0:
		return int(^uint(0) >> 1)
	}
	return v
}
