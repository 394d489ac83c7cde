package host

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/openheim/openheim/runtime/event"
)

// Operations (seed 002's Operation, OperationTarget): each tool call seen
// as what it does to what, in terms that do not depend on the agent:
// Claude Code's Read and Codex's cat are both a read of a file. They are
// derived from the tool calls the read model keeps, so there are as many
// as those (MaxToolCallEntries) and they cost nothing per update.

// Operation is what one tool call does. Its ID is the call's: a call is
// one operation, and a permission request names it (PermissionEntry).
type Operation struct {
	ID     string
	TurnID string
	// Kind is the call's ACP kind (read, edit, delete, move, search,
	// execute, think, fetch, switch_mode), "other" when the agent gave none.
	Kind      string
	Phase     string // PhasePending, PhaseRunning, PhaseCompleted, PhaseFailed
	Title     string
	Target    OperationTarget
	UpdatedAt time.Time
}

// OperationTarget is what an operation acts on: a file's path, a command
// line, a URL or a search query. Type is "" when the agent said none.
type OperationTarget struct {
	Type  string
	Value string
}

// Operation phases.
const (
	PhasePending   = "pending"
	PhaseRunning   = "running"
	PhaseCompleted = "completed"
	PhaseFailed    = "failed"
)

// Target types.
const (
	TargetFile    = "file"
	TargetCommand = "command"
	TargetURL     = "url"
	TargetQuery   = "query"
)

// Operation is the entry's call as an operation. A call openheim refused
// fails as soon as it is refused: it will not run, whatever the agent
// says of it before it ends it.
func (e *ToolCallEntry) Operation() Operation {
	op := Operation{ID: e.ID, TurnID: e.TurnID, Kind: e.Kind, Title: e.Title,
		Target: OperationTarget{Type: e.targetType, Value: e.Target}, UpdatedAt: e.UpdatedAt}
	if op.Kind == "" {
		op.Kind = "other"
	}
	switch {
	case e.Status == event.StatusCompleted:
		op.Phase = PhaseCompleted
	case e.Status == event.StatusFailed || e.Refused:
		op.Phase = PhaseFailed
	case e.Status == event.StatusInProgress:
		op.Phase = PhaseRunning
	default:
		op.Phase = PhasePending
	}
	return op
}

// Keys of a call's arguments naming its target, by type; the agents'
// (Claude Code's file_path and notebook_path, Codex's command list).
var (
	commandKeys = []string{"command", "cmd"}
	fileKeys    = []string{"file_path", "path", "notebook_path"}
	urlKeys     = []string{"url"}
	queryKeys   = []string{"query", "pattern"}
)

type targetKeys struct {
	typ  string
	keys []string
}

// firstByKind: what names the target of a call of these kinds before its
// locations do.
var firstByKind = map[string]targetKeys{"execute": {TargetCommand, commandKeys}, "fetch": {TargetURL, urlKeys}, "search": {TargetQuery, queryKeys}}

// byArgs: what names a target in any call's arguments, in this order.
var byArgs = []targetKeys{{TargetCommand, commandKeys}, {TargetFile, fileKeys}, {TargetURL, urlKeys}, {TargetQuery, queryKeys}}

// targetOf is what a call acts on: the first location's path, else a
// diff's, else what its arguments name. An execute call's command, a fetch
// call's URL and a search call's query come first: a command's location
// is where it runs, not what it does.
func targetOf(e *ToolCallEntry) OperationTarget {
	var in map[string]any
	parsed := false
	args := func() map[string]any { // parsed when needed: most calls have a location
		if !parsed && len(e.RawInput) > 0 {
			json.Unmarshal(e.RawInput, &in) // arguments that are not an object name nothing
		}
		parsed = true
		return in
	}
	if f, ok := firstByKind[e.Kind]; ok {
		if v := argOf(args(), f.keys); v != "" {
			return OperationTarget{f.typ, v}
		}
	}
	for _, l := range e.Locations {
		if l.Path != "" {
			return OperationTarget{TargetFile, l.Path}
		}
	}
	for _, c := range e.Content {
		if c.Diff != nil && c.Diff.Path != "" {
			return OperationTarget{TargetFile, c.Diff.Path}
		}
	}
	for _, k := range byArgs {
		if v := argOf(args(), k.keys); v != "" {
			return OperationTarget{k.typ, v}
		}
	}
	return OperationTarget{}
}

// argOf is the first of keys in the arguments that is a string or a list
// of strings (Codex's ["bash", "-lc", "..."]), joined by spaces.
func argOf(in map[string]any, keys []string) string {
	for _, k := range keys {
		switch v := in[k].(type) {
		case string:
			if v != "" {
				return v
			}
		case []any:
			parts := make([]string, 0, len(v))
			for _, p := range v {
				if s, ok := p.(string); ok {
					parts = append(parts, s)
				}
			}
			if len(parts) > 0 {
				return strings.Join(parts, " ")
			}
		}
	}
	return ""
}
