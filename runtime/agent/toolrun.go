package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/permission"
	"github.com/openheim/openheim/runtime/tools"
)

// runTools runs the calls of one reply concurrently and returns their
// results in call order, and the images they returned (nil when none).
func (r *run) runTools(ctx context.Context, calls []message.Block) ([]message.Block, *message.Message) {
	previews := make([]*tools.Change, len(calls))
	for i, c := range calls {
		previews[i] = r.preview(ctx, c)
		content, locations := previews[i].Content()
		r.emit(event.Event{Kind: event.ToolCall, Tool: &event.ToolCallInfo{
			ID: c.ID, Title: c.Name, Kind: r.toolKind(c.Name), Status: event.StatusPending, RawInput: rawInput(c.Arguments),
			Content: content, Locations: locations,
		}})
	}
	results := make([]message.Block, len(calls))
	images := make([][]message.Block, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The permission question shows the change too.
			callCtx := ctx
			if content, _ := previews[i].Content(); content != nil {
				callCtx = permission.WithContent(ctx, content)
			}
			results[i], images[i] = r.runTool(callCtx, c, previews[i])
		}()
	}
	wg.Wait()
	return results, imageMessage(calls, images)
}

// imageMessage shows the model the images tool calls returned: a tool
// result is text on every provider's wire, while every provider takes
// images in a user message.
func imageMessage(calls []message.Block, images [][]message.Block) *message.Message {
	var m *message.Message
	for i, imgs := range images {
		if len(imgs) == 0 {
			continue
		}
		if m == nil {
			m = &message.Message{Role: message.RoleUser}
		}
		m.Content = append(m.Content, message.Text(fmt.Sprintf("Image(s) returned by tool call %s (%s):", calls[i].ID, calls[i].Name)))
		m.Content = append(m.Content, imgs...)
	}
	return m
}

// runTool runs call c; preview is the change it was shown to make, which
// its final update carries when the tool does not report its own.
func (r *run) runTool(ctx context.Context, c message.Block, preview *tools.Change) (message.Block, []message.Block) {
	start := time.Now()
	res := r.execute(ctx, c, func() {
		// Only now is it running: while a permission question is open the
		// call stays pending, as ACP clients expect.
		r.emit(event.Event{Kind: event.ToolCallUpdate, Tool: &event.ToolCallInfo{ID: c.ID, Status: event.StatusInProgress}})
		start = time.Now()
	})
	if ctx.Err() != nil {
		res = tools.Result{Content: CancelledResult, IsError: true}
	}
	res.Content = capResult(res.Content, r.maxResult())
	status := event.StatusCompleted
	if res.IsError {
		status = event.StatusFailed
	}
	out, _ := json.Marshal(res.Content)
	var content []event.ToolContent
	var locations []event.Location
	if !res.IsError {
		if res.Change == nil {
			res.Change = preview
		}
		content, locations = res.Change.Content()
	}
	r.emit(event.Event{Kind: event.ToolCallUpdate, Tool: &event.ToolCallInfo{
		ID: c.ID, Status: status, RawOutput: out, Duration: time.Since(start),
		Content: content, Locations: locations,
	}})
	if len(res.Images) > 0 && !res.IsError {
		res.Content += fmt.Sprintf("\n[%d image(s) follow]", len(res.Images))
	}
	return message.ToolResult(c.ID, c.Name, res.Content, res.IsError), res.Images
}

// execute checks and runs one call; started is called just before the tool
// runs, after the arguments and the permission check passed.
func (r *run) execute(ctx context.Context, c message.Block, started func()) (res tools.Result) {
	var t tools.Tool
	ok := false
	if r.Tools != nil {
		t, ok = r.Tools.Get(c.Name)
	}
	if !ok {
		return tools.Errorf("Unknown tool: %s", c.Name)
	}
	args := strings.TrimSpace(c.Arguments)
	if args == "" {
		args = "{}"
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(args), &obj); err != nil || obj == nil {
		return tools.Errorf("Invalid arguments for %s: expected a JSON object, got %s", c.Name, excerpt(args, 200))
	}
	if r.Permit != nil {
		c.Arguments = args
		if !r.Permit(ctx, c, t.Kind()) {
			return tools.Result{Content: permission.DeniedResult, IsError: true}
		}
	}
	if ctx.Err() != nil {
		return tools.Result{Content: CancelledResult, IsError: true}
	}
	defer func() {
		// A panicking tool must fail its call, not the process.
		if p := recover(); p != nil {
			res = tools.Errorf("Tool %s crashed: %v", c.Name, p)
		}
	}()
	started()
	return t.Run(tools.WithCallID(ctx, c.ID), json.RawMessage(args))
}

// preview is the change call c would make, when its tool can say (the
// file tools); nil otherwise. A tool's panic costs the preview only.
func (r *run) preview(ctx context.Context, c message.Block) (ch *tools.Change) {
	if r.Tools == nil {
		return nil
	}
	t, ok := r.Tools.Get(c.Name)
	p, can := t.(tools.Previewer)
	if !ok || !can {
		return nil
	}
	args := strings.TrimSpace(c.Arguments)
	if !json.Valid([]byte(args)) {
		return nil
	}
	defer func() {
		if recover() != nil {
			ch = nil
		}
	}()
	return p.Preview(ctx, json.RawMessage(args))
}

func (r *run) toolKind(name string) string {
	if r.Tools != nil {
		if t, ok := r.Tools.Get(name); ok {
			return t.Kind()
		}
	}
	return tools.KindOther
}

func (r *run) maxResult() int {
	if r.MaxResultBytes > 0 {
		return r.MaxResultBytes
	}
	return DefaultMaxResultBytes
}

// capResult truncates s to at most limit bytes on a rune boundary and says so.
func capResult(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n[... output truncated: %d bytes total, showing the first %d]", len(s), cut)
}

// rawInput returns the arguments as JSON for the tool_call event: the object
// when they parse, else the raw string so the client still sees them.
func rawInput(args string) json.RawMessage {
	if json.Valid([]byte(args)) && strings.HasPrefix(strings.TrimSpace(args), "{") {
		return json.RawMessage(args)
	}
	if strings.TrimSpace(args) == "" {
		return json.RawMessage("{}")
	}
	b, _ := json.Marshal(args)
	return b
}

func excerpt(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func notRun(calls []message.Block, why string) message.Message {
	m := message.Message{Role: message.RoleTool}
	for _, c := range calls {
		m.Content = append(m.Content, message.ToolResult(c.ID, c.Name, why, true))
	}
	return m
}

// repairHistory gives every tool_use without a result (a process killed
// mid-tool) an error result, so the stored session can always be continued.
func repairHistory(h []message.Message) []message.Message {
	out := make([]message.Message, 0, len(h)+1)
	for i := 0; i < len(h); i++ {
		out = append(out, h[i])
		calls := h[i].ToolUses()
		if h[i].Role != message.RoleAssistant || len(calls) == 0 {
			continue
		}
		answered := map[string]bool{}
		if i+1 < len(h) && h[i+1].Role == message.RoleTool {
			for _, b := range h[i+1].Content {
				answered[b.ToolCallID] = true
			}
		}
		var missing []message.Block
		for _, c := range calls {
			if !answered[c.ID] {
				missing = append(missing, c)
			}
		}
		if len(missing) == 0 {
			continue
		}
		fill := notRun(missing, "Interrupted: no result was recorded.")
		if i+1 < len(h) && h[i+1].Role == message.RoleTool {
			merged := message.Message{Role: message.RoleTool, Content: append(append([]message.Block{}, h[i+1].Content...), fill.Content...)}
			out = append(out, merged)
			i++
			continue
		}
		out = append(out, fill)
	}
	return out
}

// RepairHistory gives every tool call of h a result (as a turn does before
// sending h), for callers that send a history themselves.
func RepairHistory(h []message.Message) []message.Message { return repairHistory(h) }
