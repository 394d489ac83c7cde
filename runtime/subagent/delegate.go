// Package subagent is delegate_task: the parent agent hands a standalone
// task to a subagent (a profile from agents/<name>.md or one defined inline)
// that runs its own turn of the agent loop and returns only its answer.
//
// A subagent starts from the task alone (no parent history), runs the
// parent's tool instances (so the parent's work_dir and MCP connections)
// minus delegate_task, goes through the parent's permission gate and stops
// with the parent's context. Its turn is stored as a session of its own
// when Options.Child makes one (a child of the parent's session); only its
// answer lands in the parent's history, as the tool result. Its tool calls
// show in the parent's event stream, titled "[name] tool" under ids
// prefixed by the delegate call's.
package subagent

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/openheim/openheim/runtime/agent"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/ids"
	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/tools"
)

// DefaultMaxIterations is the parent's cap when Options.MaxIterations is 0,
// the agent loop's own default.
const DefaultMaxIterations = 10

// InlineName names an inline subagent in event titles and its session.
const InlineName = "subagent"

// Options are what a delegate_task tool takes from the parent's turn.
type Options struct {
	Profiles map[string]Profile
	// Tools are the parent's tools; delegate_task itself is never given to
	// a subagent. Read at each call, so tools added after NewTool count.
	Tools *tools.Registry
	// Provider resolves a provider and model, "" meaning the parent's; a
	// zero Model means ParentModel.
	Provider    func(provider, model string) (llm.Provider, Model, error)
	ParentModel Model
	// MaxIterations is the parent's cap: a subagent's limit is
	// min(its own or requested, this). 0 means DefaultMaxIterations.
	MaxIterations int
	// Permit is the parent's permission gate; the subagent's calls reach it
	// under their forwarded (prefixed) ids. nil allows every call.
	Permit func(ctx context.Context, call message.Block, kind string) bool
	// Sink is the parent's event stream. Subagents emit to it from their
	// own goroutines while the parent's loop emits too: NewTool makes it
	// safe for concurrent use with event.Sync (a no-op for a Queue); give
	// the parent's Turn the same synced sink.
	Sink      event.Sink
	SessionID string
	// CallID returns the id of the tool call running under ctx, to prefix
	// the subagent's call ids with; nil or "" uses a fresh "delegate-…" id.
	CallID func(ctx context.Context) string
	// Child, when set, makes the session a subagent's turn is stored in;
	// nil (or a failure, logged) leaves the turn unstored.
	Child func(ctx context.Context, spec ChildSpec) (*Child, error)
	// External runs a task on the external ACP agent a profile names
	// (acp_agent), streaming its events to sink under the parent's gate;
	// nil refuses such profiles.
	External func(ctx context.Context, agent, task string, sink event.Sink, permit func(context.Context, message.Block, string) bool) (event.End, error)
}

// ChildSpec is the session a subagent's run asks for.
type ChildSpec struct {
	Name, Task string // the subagent's name ("subagent" inline) and task
	CallID     string // the delegate_task call's
	Provider   string // "" is the parent's
	Model      string
}

// Child is a subagent's run as a session of its own.
type Child struct {
	SessionID string
	// Persist stores the turn's messages, as a session's turn does.
	Persist func(msgs ...message.Message) error
	// Done records how the turn ended (its usage, its last update).
	Done func(end event.End)
}

// Model is a resolved model and its limits.
type Model struct {
	Name          string
	MaxTokens     int
	ContextWindow int64
}

type tool struct {
	opts Options
	spec llm.ToolSpec
}

// NewTool returns the delegate_task tool. Concurrent calls (several in one
// reply) run concurrently: each builds its own agent and registry.
func NewTool(opts Options) tools.Tool {
	if opts.Sink != nil {
		opts.Sink = event.Sync(opts.Sink)
	}
	return &tool{opts: opts, spec: Spec(opts.Profiles)}
}

func (t *tool) Spec() llm.ToolSpec { return t.spec }

// Kind is think: delegating changes nothing by itself, and every call the
// subagent makes passes the permission gate on its own, so asking about
// the delegation too would only ask twice.
func (t *tool) Kind() string { return tools.KindThink }

// plan is a subagent as it will run.
type plan struct {
	name, who, system, provider, model string   // who: for messages
	tools                              []string // nil: all the parent's
	maxIter                            int
	acpAgent                           string // an external agent runs it
}

func (t *tool) Run(ctx context.Context, raw json.RawMessage) tools.Result {
	a, err := decodeArgs(raw)
	if err != nil {
		return tools.Errorf("%v", err)
	}
	p, err := t.plan(a)
	if err != nil {
		return tools.Errorf("%v", err)
	}
	if p.acpAgent != "" {
		return t.runExternal(ctx, p, a.Task)
	}
	reg, err := t.registry(p)
	if err != nil {
		return tools.Errorf("%v", err)
	}
	if t.opts.Provider == nil {
		return tools.Errorf("no model provider is available to run a subagent")
	}
	prov, model, err := t.opts.Provider(p.provider, p.model)
	if err != nil {
		return tools.Errorf("%s: %v", p.who, err)
	}
	if model == (Model{}) {
		model = t.opts.ParentModel
	}
	prefix := t.callPrefix(ctx)
	fw := &forwarder{tool: t, prefix: prefix, name: p.name}
	sub := &agent.Agent{
		Provider:      prov,
		Tools:         reg,
		Model:         model.Name,
		System:        p.system,
		MaxIterations: p.maxIter,
		MaxTokens:     model.MaxTokens,
		ContextWindow: model.ContextWindow,
		Permit:        t.permit(prefix),
	}
	turn := agent.Turn{
		SessionID: t.opts.SessionID,
		Input:     message.Message{Role: message.RoleUser, Content: []message.Block{message.Text(a.Task)}},
		Sink:      fw,
	}
	child := t.child(ctx, ChildSpec{Name: p.name, Task: a.Task, CallID: prefix, Provider: p.provider, Model: model.Name})
	if child != nil {
		turn.Persist = child.Persist
	}
	end := sub.Run(ctx, turn)
	if child != nil && child.Done != nil {
		child.Done(end)
	}
	return result(p.who, end, fw.answer())
}

// child makes the session of a subagent's run, if the parent stores them.
func (t *tool) child(ctx context.Context, spec ChildSpec) *Child {
	if t.opts.Child == nil {
		return nil
	}
	c, err := t.opts.Child(ctx, spec)
	if err != nil {
		slog.Warn("subagent: its run is not stored as a session", "subagent", spec.Name, "err", err)
		return nil
	}
	return c
}

// runExternal hands the task to the profile's external ACP agent; its tool
// calls show in the parent's stream as a model subagent's do.
func (t *tool) runExternal(ctx context.Context, p plan, task string) tools.Result {
	if t.opts.External == nil {
		return tools.Errorf("%s runs on the ACP agent %q, which this session cannot start", p.who, p.acpAgent)
	}
	prefix := t.callPrefix(ctx)
	fw := &forwarder{tool: t, prefix: prefix, name: p.name}
	task = strings.TrimSpace(p.system + "\n\n" + task)
	end, err := t.opts.External(ctx, p.acpAgent, task, fw, t.permit(prefix))
	if err != nil {
		return tools.Errorf("%s (ACP agent %s): %v", p.who, p.acpAgent, err)
	}
	return result(p.who, end, fw.answer())
}

// plan checks the arguments against the profiles and the parent's cap.
func (t *tool) plan(a args) (plan, error) {
	if strings.TrimSpace(a.Task) == "" {
		return plan{}, fmt.Errorf("task is required: a complete, standalone brief for the subagent")
	}
	agentName := strings.TrimSpace(a.Agent)
	inline := strings.TrimSpace(a.SystemPrompt) != ""
	switch {
	case agentName != "" && inline:
		return plan{}, fmt.Errorf("give exactly one of agent or system_prompt, not both: agent picks a configured subagent, system_prompt defines an inline one")
	case agentName == "" && !inline:
		return plan{}, fmt.Errorf("give exactly one of agent (a configured subagent) or system_prompt (an inline one)")
	}
	var p plan
	if agentName != "" {
		prof, ok := t.opts.Profiles[agentName]
		if !ok {
			if len(t.opts.Profiles) == 0 {
				return plan{}, fmt.Errorf("unknown agent %q: no subagents are configured; define one inline with system_prompt", agentName)
			}
			return plan{}, fmt.Errorf("unknown agent %q; available: %s", agentName, strings.Join(sortedNames(t.opts.Profiles), ", "))
		}
		if len(a.Tools) > 0 || a.Model != "" || a.Provider != "" {
			return plan{}, fmt.Errorf("tools, model and provider are for inline subagents only: agent %q runs with its profile's", agentName)
		}
		p = plan{name: agentName, who: "subagent " + agentName, system: prof.System, provider: prof.Provider, model: prof.Model,
			tools: prof.Tools, maxIter: prof.MaxIterations, acpAgent: prof.ACPAgent}
	} else {
		p = plan{name: InlineName, who: "the inline subagent", system: a.SystemPrompt, provider: a.Provider, model: a.Model, tools: a.Tools}
	}
	if a.MaxIterations > 0 && (p.maxIter == 0 || a.MaxIterations < p.maxIter) {
		p.maxIter = a.MaxIterations
	}
	limit := t.opts.MaxIterations
	if limit <= 0 {
		limit = DefaultMaxIterations
	}
	if p.maxIter <= 0 || p.maxIter > limit {
		p.maxIter = limit
	}
	return p, nil
}

// registry is the subagent's tools: the parent's instances, narrowed to
// p.tools when set, never delegate_task.
func (t *tool) registry(p plan) (*tools.Registry, error) {
	parent := t.opts.Tools
	if parent == nil {
		parent = tools.NewRegistry()
	}
	if p.tools == nil {
		var keep []tools.Tool
		for _, tl := range parent.Tools() {
			if tl.Spec().Name != Name {
				keep = append(keep, tl)
			}
		}
		return tools.NewRegistry(keep...), nil
	}
	reg := tools.NewRegistry()
	var unknown []string
	for _, n := range p.tools {
		if n == Name {
			return nil, fmt.Errorf("%s cannot be given to a subagent: subagents cannot delegate further", Name)
		}
		tl, ok := parent.Get(n)
		if !ok {
			unknown = append(unknown, n)
			continue
		}
		reg.Add(tl)
	}
	if len(unknown) > 0 {
		var avail []string
		for _, tl := range parent.Tools() {
			if n := tl.Spec().Name; n != Name {
				avail = append(avail, n)
			}
		}
		return nil, fmt.Errorf("unknown tool(s) for %s: %s; available: %s", p.who, strings.Join(unknown, ", "), strings.Join(avail, ", "))
	}
	return reg, nil
}

func (t *tool) callPrefix(ctx context.Context) string {
	if t.opts.CallID != nil {
		if id := t.opts.CallID(ctx); id != "" {
			return id
		}
	}
	return ids.NewN("delegate-", 4)
}

// permit passes the subagent's calls to the parent's gate under the ids
// the parent's stream shows them with.
func (t *tool) permit(prefix string) func(context.Context, message.Block, string) bool {
	if t.opts.Permit == nil {
		return nil
	}
	return func(ctx context.Context, call message.Block, kind string) bool {
		call.ID = prefix + "/" + call.ID
		return t.opts.Permit(ctx, call, kind)
	}
}

func (t *tool) emit(e event.Event) {
	if t.opts.Sink == nil {
		return
	}
	t.opts.Sink.Emit(e)
}

// result turns the subagent's end into the tool result: its answer, with a
// note when it stopped early; a runtime failure is a tool error.
func result(who string, end event.End, answer string) tools.Result {
	if end.Err != nil {
		return tools.Errorf("%s failed: %v", who, end.Err)
	}
	if strings.TrimSpace(answer) == "" {
		answer = "(the subagent gave no answer)"
	}
	if end.StopReason != event.StopEndTurn {
		calls := "calls"
		if end.Iterations == 1 {
			calls = "call"
		}
		answer += fmt.Sprintf("\n\n[subagent stopped early: %s after %d model %s; the answer may be incomplete]", end.StopReason, end.Iterations, calls)
	}
	return tools.Result{Content: answer}
}
