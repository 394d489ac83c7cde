package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/tools"
)

// Tools returns the memory tools the model calls: remember, search_memory,
// edit_memory and forget, with seed 000's specs. With a nil m, Spec and
// Kind work (for listing tools) and Run reports that memory is not open.
func Tools(m *Memory) []tools.Tool {
	return []tools.Tool{&rememberTool{m}, &searchTool{m}, &editTool{m}, &forgetTool{m}}
}

type rememberTool struct{ m *Memory }

func (*rememberTool) Spec() llm.ToolSpec {
	return spec(rememberName, rememberDescription, rememberParams)
}
func (*rememberTool) Kind() string { return tools.KindEdit }

func (t *rememberTool) Run(_ context.Context, raw json.RawMessage) tools.Result {
	a, err := parseArgs(raw, t.m)
	content := a.str("content", &err)
	if err != nil {
		return tools.Errorf("%v", err)
	}
	n, err := t.m.Add(content)
	return wrote("Remembered", n, err)
}

type searchTool struct{ m *Memory }

func (*searchTool) Spec() llm.ToolSpec {
	return spec(searchMemoryName, searchMemoryDescription, searchMemoryParams)
}
func (*searchTool) Kind() string { return tools.KindSearch }

// Run lists "#12 (2026-11-30): content" lines, best first. A top_k
// outside 1..20 is clamped rather than refused: the model meant "few" or
// "many", and answering beats a retry.
func (t *searchTool) Run(ctx context.Context, raw json.RawMessage) tools.Result {
	a, err := parseArgs(raw, t.m)
	query := a.str("query", &err)
	topK, given := a.integer("top_k", &err)
	if err == nil && strings.TrimSpace(query) == "" {
		err = errors.New(`argument "query" is empty`)
	}
	if err != nil {
		return tools.Errorf("%v", err)
	}
	k := 0 // absent: the configured default
	if given {
		k = int(min(max(topK, 1), config.MaxTopK))
	}
	hits, notice, err := t.m.Search(ctx, query, k)
	if err != nil {
		return tools.Errorf("%v", err)
	}
	var b strings.Builder
	if notice != "" {
		fmt.Fprintf(&b, "Note: %s.\n", notice)
	}
	if len(hits) == 0 {
		fmt.Fprintf(&b, "No notes match %q.", query)
	}
	for i, h := range hits {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "#%d (%s): %s", h.ID, date(h.UpdatedAt), h.Content)
	}
	return tools.Result{Content: b.String()}
}

type editTool struct{ m *Memory }

func (*editTool) Spec() llm.ToolSpec {
	return spec(editMemoryName, editMemoryDescription, editMemoryParams)
}
func (*editTool) Kind() string { return tools.KindEdit }

func (t *editTool) Run(_ context.Context, raw json.RawMessage) tools.Result {
	a, err := parseArgs(raw, t.m)
	id := a.id(&err)
	content := a.str("content", &err)
	if err != nil {
		return tools.Errorf("%v", err)
	}
	n, err := t.m.Edit(id, content)
	return wrote("Updated", n, err)
}

// wrote is the answer to a call that wrote note n: what was done, the
// note's id and date; or what failed.
func wrote(done string, n Note, err error) tools.Result {
	if err != nil {
		return tools.Errorf("%v", err)
	}
	return tools.Result{Content: fmt.Sprintf("%s #%d (%s).", done, n.ID, date(n.UpdatedAt))}
}

type forgetTool struct{ m *Memory }

func (*forgetTool) Spec() llm.ToolSpec { return spec(forgetName, forgetDescription, forgetParams) }
func (*forgetTool) Kind() string       { return tools.KindDelete }

func (t *forgetTool) Run(_ context.Context, raw json.RawMessage) tools.Result {
	a, err := parseArgs(raw, t.m)
	id := a.id(&err)
	if err != nil {
		return tools.Errorf("%v", err)
	}
	if err := t.m.Delete(id); err != nil {
		return tools.Errorf("%v", err)
	}
	return tools.Result{Content: fmt.Sprintf("Forgot #%d.", id)}
}

// date is how tools show a note's time: its day, in local time.
func date(t time.Time) string { return t.Local().Format("2006-01-02") }

func spec(name, description, params string) llm.ToolSpec {
	return tools.Spec(name, description, params)
}

// args reads a tool call's arguments; the first problem sticks in *err.
type args map[string]json.RawMessage

func parseArgs(raw json.RawMessage, m *Memory) (args, error) {
	a := args{}
	if m == nil {
		return a, errors.New("long-term memory is not open")
	}
	if t := bytes.TrimSpace(raw); len(t) > 0 {
		if err := json.Unmarshal(t, &a); err != nil || a == nil {
			return args{}, fmt.Errorf("invalid arguments: expected a JSON object, got %.100s", t)
		}
	}
	return a, nil
}

// get returns an argument, nil when absent or null ("use the default").
func (a args) get(name string) json.RawMessage {
	v := bytes.TrimSpace(a[name])
	if len(v) == 0 || string(v) == "null" {
		return nil
	}
	return v
}

func (a args) str(name string, err *error) string {
	v := a.get(name)
	var s string
	switch {
	case *err != nil:
	case v == nil:
		*err = fmt.Errorf("missing required argument %q", name)
	case json.Unmarshal(v, &s) != nil:
		*err = fmt.Errorf("argument %q must be a string, got %.60s", name, v)
	}
	return s
}

// integer reads an optional integer; 12, 12.0 and "12" all count (models
// send each). Absent is 0, false.
func (a args) integer(name string, err *error) (int64, bool) {
	v := a.get(name)
	if *err != nil || v == nil {
		return 0, false
	}
	var f float64
	if json.Unmarshal(v, &f) == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return int64(f), true
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		if n, perr := strconv.ParseInt(strings.TrimPrefix(strings.TrimSpace(s), "#"), 10, 64); perr == nil {
			return n, true
		}
	}
	*err = fmt.Errorf("argument %q must be an integer, got %.60s", name, v)
	return 0, false
}

// id reads the required note id; "#12" is accepted, as tools show ids so.
func (a args) id(err *error) int64 {
	id, ok := a.integer("id", err)
	switch {
	case *err != nil:
	case !ok:
		*err = errors.New(`missing required argument "id"`)
	case id <= 0:
		*err = &notFoundError{id}
	}
	return id
}
