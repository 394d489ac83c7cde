package commands

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm/retry"
)

// textRenderer is the plain-text view of a turn: the answer streams to
// stdout; on a terminal, thinking and tool activity go to stderr so that
// `openheim prompt ... > answer.txt` captures the answer only.
type textRenderer struct {
	io      *IOStreams
	out     io.Writer // io.Out through the config's redactor (per chunk)
	last    byte      // last byte written to stdout
	wrote   bool
	pending map[string]string // tool call id -> title
	inThink bool
	// newReply is set once tools ran: the next answer text starts a new
	// paragraph instead of running on from the text before the tool calls.
	newReply bool

	// mu serialises Emit with retrying, which the model call's goroutine
	// calls: a retry's status line on stderr is drawn in place until the
	// next output (status).
	mu     sync.Mutex
	status bool
}

func newTextRenderer(ios *IOStreams) *textRenderer {
	return &textRenderer{io: ios, out: ios.Redactor().Writer(ios.Out), pending: map[string]string{}}
}

// Emit implements event.Sink.
func (r *textRenderer) Emit(e event.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.clearStatus()
	switch e.Kind {
	case event.AgentMessageChunk:
		if e.Content == nil || e.Content.Text == "" {
			return
		}
		r.endThinking()
		if r.newReply && r.wrote {
			if r.last != '\n' {
				fmt.Fprint(r.out, "\n")
			}
			fmt.Fprint(r.out, "\n")
		}
		r.newReply = false
		fmt.Fprint(r.out, e.Content.Text)
		r.wrote = true
		r.last = e.Content.Text[len(e.Content.Text)-1]
	case event.AgentThoughtChunk:
		if r.io.ErrTTY && e.Content != nil {
			r.inThink = true
			fmt.Fprint(r.io.ErrOut, r.io.Dim(e.Content.Text))
		}
	case event.ToolCall:
		r.pending[e.Tool.ID] = describeCall(e.Tool)
		r.newReply = true
	case event.ToolCallUpdate:
		if e.Tool.Title != "" || len(e.Tool.RawInput) > 0 {
			r.pending[e.Tool.ID] = describeCall(e.Tool)
		}
		if !r.io.ErrTTY {
			return
		}
		switch e.Tool.Status {
		case event.StatusCompleted, event.StatusFailed:
			r.endThinking()
			mark := "✓"
			if e.Tool.Status == event.StatusFailed {
				mark = "✗"
			}
			desc := r.pending[e.Tool.ID]
			if d := diffSummary(desc, e.Tool.Content); d != "" {
				desc += " · " + d
			}
			r.lineBreak()
			fmt.Fprintf(r.io.ErrOut, "%s\n", r.io.Dim(fmt.Sprintf("%s %s (%s)", mark, desc, shortDuration(e.Tool.Duration))))
		}
	case event.Retry:
		if e.Retry != nil {
			r.retryLocked(retryAttempt(e.Retry))
		}
	case event.Dropped:
		if r.io.ErrTTY {
			fmt.Fprintf(r.io.ErrOut, "%s\n", r.io.Dim(fmt.Sprintf("[%d events dropped: output was too slow]", e.Count)))
		}
	}
}

// lineBreak ends a partial answer line before stderr output on a terminal,
// where both streams share the screen.
func (r *textRenderer) lineBreak() {
	if r.io.OutTTY && r.wrote && r.last != '\n' {
		fmt.Fprintln(r.out)
		r.last = '\n'
	}
}

func (r *textRenderer) endThinking() {
	if r.inThink {
		fmt.Fprintln(r.io.ErrOut)
		r.inThink = false
	}
}

// retrying shows a retry on a terminal as one status line on stderr, in
// place (the next retry replaces it, output clears it); else as one line.
func (r *textRenderer) retrying(a retry.Attempt) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.retryLocked(a)
}

func (r *textRenderer) retryLocked(a retry.Attempt) {
	if !r.io.ErrTTY {
		fmt.Fprintf(r.io.ErrOut, "openheim: %s\n", retryLine(a))
		return
	}
	r.lineBreak()
	fmt.Fprintf(r.io.ErrOut, "\r\x1b[K%s", r.io.Dim("⟳ "+retryLine(a)))
	r.status = true
}

func (r *textRenderer) clearStatus() {
	if r.status {
		fmt.Fprint(r.io.ErrOut, "\r\x1b[K")
		r.status = false
	}
}

// finish ends the answer with a newline so the shell prompt starts clean.
func (r *textRenderer) finish() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.clearStatus()
	r.endThinking()
	if r.wrote && r.last != '\n' {
		fmt.Fprintln(r.out)
	}
}

func describeCall(t *event.ToolCallInfo) string {
	if strings.ContainsRune(strings.TrimSpace(t.Title), ' ') { // an external agent's description
		return oneLine(t.Title, 90)
	}
	args := strings.TrimSpace(string(t.RawInput))
	if len(args) > 80 {
		args = args[:77] + "..."
	}
	if args == "" || args == "{}" {
		return t.Title
	}
	return t.Title + " " + args
}

func shortDuration(d time.Duration) string {
	if d < time.Millisecond {
		return "<1ms"
	}
	return d.Round(time.Millisecond).String()
}
