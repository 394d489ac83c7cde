package commands

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/openheim/openheim/commands/tui"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm/retry"
)

// chatRenderer draws a turn on the terminal: the answer as styled markdown
// while it streams, thinking dimmed, one line per tool call with its status
// and duration, and a spinner whenever the chat waits. Every write goes
// through mu, which the spinner's animation shares.
type chatRenderer struct {
	mu       sync.Mutex
	w        *lineTracker
	style    tui.Style
	md       *tui.Markdown
	spin     *tui.Spinner
	thinking bool // show thinking
	inThink  bool
	running  map[string]string // tool call id -> one-line description
	order    []string          // running calls, oldest first
}

// lineTracker remembers whether the cursor is at the start of a line
// (escape sequences move nothing): the spinner may only draw there, as it
// redraws its whole line.
type lineTracker struct {
	w      io.Writer
	open   bool
	escape int // 0 outside an escape sequence, 1 after ESC, 2 inside CSI
}

func (t *lineTracker) Write(p []byte) (int, error) {
	for _, b := range p {
		switch {
		case t.escape == 1:
			t.escape = 0
			if b == '[' {
				t.escape = 2
			}
		case t.escape == 2:
			if b >= 0x40 && b <= 0x7e {
				t.escape = 0
			}
		case b == 0x1b:
			t.escape = 1
		case b == '\n' || b == '\r':
			t.open = false
		default:
			t.open = true
		}
	}
	return t.w.Write(p)
}

func newChatRenderer(w io.Writer, style tui.Style, thinking bool) *chatRenderer {
	r := &chatRenderer{w: &lineTracker{w: w}, style: style, thinking: thinking, running: map[string]string{}}
	r.md = tui.NewMarkdown(r.w, style)
	r.spin = tui.NewSpinner(w, &r.mu, style)
	return r
}

// begin shows the spinner until the first token.
func (r *chatRenderer) begin() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.spin.Start("thinking…")
}

// Emit implements event.Sink.
func (r *chatRenderer) Emit(e event.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch e.Kind {
	case event.AgentMessageChunk:
		if e.Content == nil || e.Content.Text == "" {
			return
		}
		r.spin.Stop()
		r.endThinking()
		r.md.Write([]byte(e.Content.Text))
	case event.AgentThoughtChunk:
		if !r.thinking || e.Content == nil || e.Content.Text == "" {
			return
		}
		r.spin.Stop()
		if !r.inThink {
			r.closeAnswer()
			r.inThink = true
		}
		fmt.Fprint(r.w, r.style.Dim(e.Content.Text))
	case event.ToolCall:
		r.spin.Stop()
		r.endThinking()
		r.closeAnswer()
		r.running[e.Tool.ID] = toolLine(e.Tool)
		r.order = append(r.order, e.Tool.ID)
		r.spin.Start(r.running[e.Tool.ID])
	case event.ToolCallUpdate:
		if e.Tool.Status != event.StatusCompleted && e.Tool.Status != event.StatusFailed {
			if line := updateLine(e.Tool); line != "" && r.running[e.Tool.ID] != "" {
				r.running[e.Tool.ID] = line
			}
			return
		}
		r.spin.Stop()
		r.closeAnswer()
		desc, ok := r.running[e.Tool.ID]
		if line := updateLine(e.Tool); line != "" || !ok {
			desc = toolLine(e.Tool)
		}
		mark := r.style.OK("✓")
		extra := ""
		if e.Tool.Status == event.StatusFailed {
			mark = r.style.Fail("✗")
			extra = " " + r.style.Fail(oneLine(failureText(e.Tool), 100))
		} else if d := diffSummary(desc, e.Tool.Content); d != "" {
			desc += " " + r.style.Dim("· ") + d
		}
		fmt.Fprintf(r.w, "%s %s %s%s\n", mark, desc, r.style.Dim("· "+shortDuration(e.Tool.Duration)), extra)
		delete(r.running, e.Tool.ID)
		r.order = removeID(r.order, e.Tool.ID)
		if len(r.order) > 0 {
			r.spin.Start(r.running[r.order[0]])
		} else {
			r.spin.Start("thinking…")
		}
	case event.Plan:
		r.spin.Stop()
		r.closeAnswer()
		for _, p := range e.Plan {
			box := "☐"
			if p.Status == "completed" {
				box = "☑"
			}
			fmt.Fprintf(r.w, "%s %s\n", r.style.AccentText(box), p.Content)
		}
	case event.Retry:
		if e.Retry != nil && r.spin.Active() {
			r.spin.Start(retryLine(retryAttempt(e.Retry)))
		}
	case event.Dropped:
		r.spin.Stop()
		r.closeAnswer()
		fmt.Fprintln(r.w, r.style.Dim(fmt.Sprintf("[%d events dropped: the terminal was too slow]", e.Count)))
	}
}

// retrying shows a model call's retry on the spinner's line: one status
// line, in place, never log lines over the output.
func (r *chatRenderer) retrying(a retry.Attempt) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.spin.Active() {
		r.spin.Start(retryLine(a))
	}
}

// pause stops the spinner and ends the current line, so the chat can ask
// something in the middle of a turn.
func (r *chatRenderer) pause() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.spin.Stop()
	r.endThinking()
	r.closeAnswer()
}

// resume restarts the spinner after a question was answered.
func (r *chatRenderer) resume() {
	r.mu.Lock()
	defer r.mu.Unlock()
	label := "thinking…"
	if len(r.order) > 0 {
		label = r.running[r.order[0]]
	}
	r.spin.Start(label)
}

// finish ends the turn's output and says how it ended when it did not
// simply end.
func (r *chatRenderer) finish(end event.End, why, hint string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.spin.Stop()
	r.endThinking()
	r.closeAnswer()
	switch {
	case end.StopReason == event.StopCancelled:
		fmt.Fprintln(r.w, r.style.Fail("⏹ cancelled")+r.style.Dim(" · what was done is kept in the session"))
	case why != "":
		fmt.Fprintln(r.w, r.style.Fail("✗ "+why))
		if hint != "" {
			fmt.Fprintln(r.w, r.style.Dim("  "+hint))
		}
	}
	fmt.Fprintln(r.w)
}

// closeAnswer flushes held-back markdown and ends an open line.
func (r *chatRenderer) closeAnswer() {
	r.md.Flush()
	if r.w.open {
		fmt.Fprintln(r.w)
	}
}

// endThinking ends the thinking text's line before the answer starts.
func (r *chatRenderer) endThinking() {
	if r.inThink && r.w.open {
		fmt.Fprintln(r.w)
	}
	r.inThink = false
}

func removeID(ids []string, id string) []string {
	for i, v := range ids {
		if v == id {
			return append(ids[:i], ids[i+1:]...)
		}
	}
	return ids
}

// toolSummary is a tool call on one line: its name and the argument that
// says the most (path, command, query, url), else the arguments compacted.
func toolSummary(name string, raw json.RawMessage) string {
	var args map[string]any
	if json.Unmarshal(raw, &args) == nil {
		for _, key := range []string{"path", "file_path", "command", "query", "pattern", "url", "task", "content"} {
			if v, ok := args[key].(string); ok && v != "" {
				return name + " " + oneLine(v, 70)
			}
		}
	}
	compact := strings.TrimSpace(string(raw))
	if compact == "" || compact == "{}" || compact == "null" {
		return name
	}
	return name + " " + oneLine(compact, 70)
}

// rawText reads a tool result as the model saw it (a JSON string).
func rawText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}
