// Package tools holds the Tool interface, the registry the agent loop calls
// through and the built-in tools. The file tools reach the work directory
// only through a confine.Root, which the kernel enforces.
package tools

import (
	"context"
	"encoding/json"
	"sort"

	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/message"
)

// ACP tool kinds.
const (
	KindRead    = "read"
	KindEdit    = "edit"
	KindDelete  = "delete"
	KindMove    = "move"
	KindSearch  = "search"
	KindExecute = "execute"
	KindThink   = "think"
	KindFetch   = "fetch"
	KindOther   = "other"
)

// Result is what a tool hands back to the model.
type Result struct {
	Content string
	IsError bool
	// Images are image blocks (message.TypeImage, base64 data) the tool
	// returned besides its text (MCP tools can); the loop shows them to
	// the model after the tool results.
	Images []message.Block
	// Change is the file change the call made (edit_file): the final
	// tool_call_update carries it as a diff, else the call's preview.
	Change *Change
}

// Errorf is a failed result; the model sees the message.
func Errorf(format string, a ...any) Result {
	return Result{Content: sprintf(format, a...), IsError: true}
}

// Tool is one callable tool. Run receives the arguments as a JSON object and
// must honour ctx: cancellation kills whatever the tool started.
type Tool interface {
	Spec() llm.ToolSpec
	Kind() string
	Run(ctx context.Context, args json.RawMessage) Result
}

// Registry is an ordered set of tools by name.
type Registry struct {
	byName map[string]Tool
}

// NewRegistry returns a registry holding ts.
func NewRegistry(ts ...Tool) *Registry {
	r := &Registry{byName: map[string]Tool{}}
	for _, t := range ts {
		r.Add(t)
	}
	return r
}

// Add registers t, replacing any tool of the same name.
func (r *Registry) Add(t Tool) { r.byName[t.Spec().Name] = t }

// Only returns a registry of r's tools named in names (an agent profile's
// tool list); names r lacks are ignored.
func (r *Registry) Only(names []string) *Registry {
	out := NewRegistry()
	for _, n := range names {
		if t, ok := r.byName[n]; ok {
			out.Add(t)
		}
	}
	return out
}

// Get returns the tool called name.
func (r *Registry) Get(name string) (Tool, bool) {
	t, ok := r.byName[name]
	return t, ok
}

// Tools returns every tool sorted by name.
func (r *Registry) Tools() []Tool {
	out := make([]Tool, 0, len(r.byName))
	for _, t := range r.byName {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Spec().Name < out[j].Spec().Name })
	return out
}

// Specs returns the specs offered to the model, sorted by name.
func (r *Registry) Specs() []llm.ToolSpec {
	ts := r.Tools()
	out := make([]llm.ToolSpec, len(ts))
	for i, t := range ts {
		out[i] = t.Spec()
	}
	return out
}

type callIDKey struct{}

// WithCallID marks ctx as running the tool call id (the agent loop does, so
// a tool that starts its own calls, such as delegate_task, can name them
// after it).
func WithCallID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, callIDKey{}, id)
}

// CallID is the id of the tool call running under ctx, or "".
func CallID(ctx context.Context) string {
	id, _ := ctx.Value(callIDKey{}).(string)
	return id
}
