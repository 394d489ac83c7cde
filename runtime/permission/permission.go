// Package permission decides whether a tool call may run: configured glob
// rules say allow, deny or ask, and a Gate turns "ask" into a question to an
// Asker (an ACP client, a terminal prompt, or a fixed answer), remembering
// "always" answers per session.
package permission

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/openheim/openheim/runtime/event"
)

// DeniedResult is the tool result the model sees for a refused call.
const DeniedResult = "Permission denied by user."

// Tool kinds the defaults depend on; they are the ACP tool kinds of
// runtime/tools (read, edit, delete, move, search, execute, think, fetch,
// other).
const (
	kindRead    = "read"
	kindSearch  = "search"
	kindThink   = "think"
	kindExecute = "execute"
)

// execTool is the shell tool; like any tool of kind execute, its "always"
// answers are keyed by its exact arguments.
const execTool = "execute_command"

// Decision is what the rules say about a call.
type Decision int

// Decisions, from least to most cautious.
const (
	Allow Decision = iota
	Ask
	Deny
)

func (d Decision) String() string {
	switch d {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	case Deny:
		return "deny"
	}
	return fmt.Sprintf("Decision(%d)", int(d))
}

// Rules are glob patterns (doublestar syntax: *, ?, [...], {a,b}) over tool
// names, e.g. "read_*", "github__*", "execute_command", and over absolute
// paths outside the work directory that calls with a known Reach may
// touch (AllowOutside, e.g. "/tmp/**").
type Rules struct {
	Allow, Deny, Ask []string
	AllowOutside     []string
}

// Decide applies the rules to a call of tool, of the given ACP kind. The most
// cautious matching rule wins: deny > ask > allow. With no matching rule,
// read-only kinds (read, search, think) are allowed and every other kind is
// asked about. An invalid pattern never matches (Validate reports it).
func (r Rules) Decide(tool, kind string) Decision {
	switch {
	case matchAny(r.Deny, tool):
		return Deny
	case matchAny(r.Ask, tool):
		return Ask
	case matchAny(r.Allow, tool):
		return Allow
	}
	switch kind {
	case kindRead, kindSearch, kindThink:
		return Allow
	}
	return Ask
}

// Validate reports the first empty or malformed pattern.
func (r Rules) Validate() error {
	for _, l := range []struct {
		name     string
		patterns []string
	}{{"allow", r.Allow}, {"deny", r.Deny}, {"ask", r.Ask}, {"allow_outside", r.AllowOutside}} {
		for _, p := range l.patterns {
			if p == "" || !doublestar.ValidatePattern(p) {
				return fmt.Errorf("permission: %s: %q is not a valid glob pattern", l.name, p)
			}
		}
	}
	for _, p := range r.AllowOutside {
		if !strings.HasPrefix(p, "/") {
			return fmt.Errorf("permission: allow_outside: %q is not an absolute path pattern", p)
		}
	}
	return nil
}

func matchAny(patterns []string, tool string) bool {
	for _, p := range patterns {
		if ok, err := doublestar.Match(p, tool); ok && err == nil {
			return true
		}
	}
	return false
}

// Outcome is the answer to a permission question, named as ACP names its
// permission option kinds.
type Outcome string

// Outcomes.
const (
	AllowOnce    Outcome = "allow_once"
	AllowAlways  Outcome = "allow_always"
	RejectOnce   Outcome = "reject_once"
	RejectAlways Outcome = "reject_always"
)

func (o Outcome) allowed() bool { return o == AllowOnce || o == AllowAlways }
func (o Outcome) always() bool  { return o == AllowAlways || o == RejectAlways }
func (o Outcome) valid() bool   { return o.allowed() || o == RejectOnce || o == RejectAlways }

// Request describes the call being asked about.
type Request struct {
	SessionID  string
	ToolCallID string
	Tool       string // the tool's name
	Kind       string // its ACP kind
	Title      string // what a client shows; the tool name when unknown
	Args       json.RawMessage
	// Reach, when known, is what the call touches (see Reach).
	Reach *Reach
	// Content is what the call will change, as its tool_call carries it
	// (the diff of an edit), for the asker to show; nil when unknown.
	Content []event.ToolContent
}

// Asker asks someone whether a call may run. An error, or ctx being
// cancelled, counts as a rejection.
type Asker interface {
	Ask(ctx context.Context, r Request) (Outcome, error)
}

// AskerFunc adapts a function to Asker.
type AskerFunc func(ctx context.Context, r Request) (Outcome, error)

// Ask calls f.
func (f AskerFunc) Ask(ctx context.Context, r Request) (Outcome, error) { return f(ctx, r) }

var (
	// AllowAsker allows every call it is asked about, once.
	AllowAsker Asker = AskerFunc(func(context.Context, Request) (Outcome, error) { return AllowOnce, nil })
	// DenyAsker rejects every call it is asked about, once.
	DenyAsker Asker = AskerFunc(func(context.Context, Request) (Outcome, error) { return RejectOnce, nil })
)

// Gate applies Rules to calls and asks its Asker when they say so. It is safe
// for concurrent use.
type Gate struct {
	rules Rules
	asker Asker // nil: asks are allowed
	mem   *memory
}

// memory holds "always" answers per session, and serialises questions about
// the same session and key so a second identical call waits for the first
// answer instead of asking twice.
type memory struct {
	mu       sync.Mutex
	sessions map[string]*sessionMemory
}

type sessionMemory struct {
	answers map[string]Outcome
	asking  map[string]chan struct{} // closed when the question on a key is answered
}

// NewGate returns a gate applying r; a nil a allows every call the rules ask
// about.
func NewGate(r Rules, a Asker) *Gate {
	return &Gate{rules: r, asker: a, mem: &memory{sessions: map[string]*sessionMemory{}}}
}

// WithAsker returns a gate with the same rules and the same remembered
// answers that asks a instead (each front end asks its own user).
func (g *Gate) WithAsker(a Asker) *Gate {
	return &Gate{rules: g.rules, asker: a, mem: g.mem}
}

// Forget drops what was remembered for a session.
func (g *Gate) Forget(sessionID string) {
	g.mem.mu.Lock()
	defer g.mem.mu.Unlock()
	delete(g.mem.sessions, sessionID)
}

// Check reports whether the call may run. Deny rules refuse and allow rules
// permit without asking; an ask is answered by a remembered "always" answer
// for the session, else by the Asker. An Asker error or a cancelled ctx
// refuses the call and is returned alongside false. A call with a Reach
// (r.Reach, else one carried by ctx: WithReach) is judged by it first
// (Rules.DecideReach).
func (g *Gate) Check(ctx context.Context, r Request) (bool, error) {
	d := g.rules.Decide(r.Tool, r.Kind)
	x := r.Reach
	if x == nil {
		x = reachFrom(ctx)
	}
	if x != nil {
		var why string
		if d, why = g.rules.DecideReach(r.Tool, r.Kind, *x); why != "" {
			slog.Warn("permission: refused "+r.Tool+": "+why, "session", r.SessionID, "tool_call", r.ToolCallID)
		}
		r.Tool, r.Kind = x.judged(r.Tool, r.Kind) // "always" answers for a command are keyed by it
	}
	switch d {
	case Deny:
		return false, nil
	case Allow:
		return true, nil
	}
	if g.asker == nil {
		return true, nil
	}
	key := memoryKey(r)
	for {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		o, known, wait, done := g.mem.begin(r.SessionID, key)
		if known {
			return o.allowed(), nil
		}
		if wait != nil {
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return false, ctx.Err()
			}
		}
		return g.ask(ctx, r, done)
	}
}

func (g *Gate) ask(ctx context.Context, r Request, done func(Outcome)) (bool, error) {
	var o Outcome
	defer func() { done(o) }()
	if r.Title == "" {
		r.Title = r.Tool
	}
	if r.Content == nil {
		r.Content = contentFrom(ctx)
	}
	got, err := g.asker.Ask(ctx, r)
	switch {
	case err != nil:
		return false, err
	case ctx.Err() != nil:
		return false, ctx.Err()
	case !got.valid():
		return false, fmt.Errorf("permission: unknown outcome %q", got)
	}
	o = got
	return o.allowed(), nil
}

// begin returns the remembered answer for key, or a channel to wait on while
// another call asks about it, or (neither) makes the caller the one asking:
// it must call done with the answer ("" for none).
func (m *memory) begin(sessionID, key string) (o Outcome, known bool, wait <-chan struct{}, done func(Outcome)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.sessions[sessionID]
	if s == nil {
		s = &sessionMemory{answers: map[string]Outcome{}, asking: map[string]chan struct{}{}}
		m.sessions[sessionID] = s
	}
	if o, ok := s.answers[key]; ok {
		return o, true, nil, nil
	}
	if ch, ok := s.asking[key]; ok {
		return "", false, ch, nil
	}
	ch := make(chan struct{})
	s.asking[key] = ch
	return "", false, nil, func(o Outcome) {
		m.mu.Lock()
		defer m.mu.Unlock()
		if o.always() {
			s.answers[key] = o
		}
		delete(s.asking, key)
		close(ch)
	}
}

// memoryKey is what an "always" answer applies to: the tool, or for commands
// the tool and its exact arguments, so allowing `ls` does not allow `rm -rf`.
func memoryKey(r Request) string {
	if r.Tool != execTool && r.Kind != kindExecute {
		return r.Tool
	}
	var b bytes.Buffer
	if err := json.Compact(&b, r.Args); err != nil {
		b.Reset()
		b.Write(bytes.TrimSpace(r.Args))
	}
	return r.Tool + "\x00" + b.String()
}

type contentKey struct{}

// WithContent returns ctx carrying what the call being checked will change
// (the diff of an edit), which the question shows: a person sees an edit
// before allowing it. Check puts it in Request.Content when that is empty.
func WithContent(ctx context.Context, c []event.ToolContent) context.Context {
	return context.WithValue(ctx, contentKey{}, c)
}

func contentFrom(ctx context.Context) []event.ToolContent {
	c, _ := ctx.Value(contentKey{}).([]event.ToolContent)
	return c
}
