package commands

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"

	"github.com/chzyer/readline"
	"github.com/openheim/openheim/commands/tui"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/permission"
)

// diffHeadLines bounds the diff shown with a permission question; [d]
// shows the rest.
const diffHeadLines = 30

// replAsker asks the user about tool calls inline, showing the diff of an
// edit, and takes the answer as one key.
type replAsker struct {
	r      *repl
	render *chatRenderer
	queue  *event.Queue
	mu     sync.Mutex // one question at a time
}

// answers are the keys of a permission question and what each means.
var answers = map[rune]permission.Outcome{
	'y': permission.AllowOnce, 'a': permission.AllowAlways,
	'n': permission.RejectOnce, 'r': permission.RejectAlways,
}

var answerWords = map[permission.Outcome]string{
	permission.AllowOnce: "allowed once", permission.AllowAlways: "allowed for this session",
	permission.RejectOnce: "rejected", permission.RejectAlways: "rejected for this session",
}

// Ask implements permission.Asker.
func (a *replAsker) Ask(ctx context.Context, req permission.Request) (permission.Outcome, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return permission.RejectOnce, err
	}
	a.queue.Flush() // the tool call is on screen before the question
	a.render.pause()
	defer a.render.resume()
	c := a.r.c
	name := req.Tool
	if name == "" {
		name = req.Title
	}
	diffs := a.diffs(req.Content)
	keys, full := "yanr", false
	for _, d := range diffs {
		full = full || len(d.Lines) > diffHeadLines
	}
	for _, d := range diffs {
		more := ""
		if full {
			more = " · [d] shows the whole diff"
		}
		printIndented(c, d.Head(c.style, diffHeadLines, more))
	}
	fmt.Fprintf(c.out, "%s allow %s?\n", c.style.AccentText("?"), c.style.Bold(toolSummary(name, req.Args)))
	prompt := "  [y] once  [a] always  [n] reject  [r] always reject "
	if full {
		keys += "d"
		prompt += " [d] whole diff "
	}
	for {
		key, err := a.r.askKey(c.style.Dim(prompt)+c.style.AccentText("›")+" ", keys)
		if err != nil {
			// Ctrl-C or Ctrl-D while asked: the turn stops here.
			a.r.end()
			return permission.RejectOnce, nil
		}
		if key == 'd' {
			for _, d := range diffs {
				printIndented(c, d.Lines)
			}
			continue
		}
		o := answers[key]
		fmt.Fprintln(c.out, c.style.Dim("  "+answerWords[o]))
		return o, nil
	}
}

// diffs draws the edits of a call's content, paths relative to the work
// directory.
func (a *replAsker) diffs(content []event.ToolContent) []tui.FileDiff {
	c := a.r.c
	var out []tui.FileDiff
	for _, item := range content {
		if item.Diff == nil {
			continue
		}
		name := item.Diff.Path
		if rel, err := filepath.Rel(c.cfg.WorkDir, name); err == nil && !strings.HasPrefix(rel, "..") {
			name = rel
		}
		out = append(out, tui.NewFileDiff(c.style, name, item.Diff.OldText, item.Diff.NewText))
	}
	return out
}

func printIndented(c *chat, lines []string) {
	for _, l := range lines {
		fmt.Fprintln(c.out, "  "+l)
	}
}

// askKey shows prompt and waits for one of keys (lower case; the upper
// case works too), taken as soon as it is pressed: no Enter. Other keys
// are ignored; Ctrl-C and Ctrl-D return readline's errors.
func (r *repl) askKey(prompt, keys string) (rune, error) {
	r.keys.begin(keys)
	defer r.keys.end()
	if _, err := r.ask(prompt); err != nil {
		return 0, err
	}
	return r.keys.pressed(), nil
}

// keyReader turns readline into a single-key reader while a question is
// open: readline owns the terminal (its raw mode, its reading goroutine),
// so the answer is taken from its input filter rather than from stdin.
// An accepted key ends the line as Enter would.
type keyReader struct {
	mu   sync.Mutex
	keys string // "" when no question is open
	got  atomic.Int32
}

func (k *keyReader) begin(keys string) {
	k.mu.Lock()
	k.keys = keys
	k.mu.Unlock()
	k.got.Store(0)
}

func (k *keyReader) end() { k.begin("") }

func (k *keyReader) pressed() rune { return rune(k.got.Load()) }

// filter is readline's FuncFilterInputRune: while a question is open it
// lets Ctrl-C and Ctrl-D through, turns an accepted key into Enter and
// drops everything else.
func (k *keyReader) filter(c rune) (rune, bool) {
	k.mu.Lock()
	keys := k.keys
	k.mu.Unlock()
	if keys == "" {
		return c, true
	}
	switch c {
	case readline.CharInterrupt, readline.CharDelete:
		return c, true
	}
	if l := unicode.ToLower(c); strings.ContainsRune(keys, l) && k.got.CompareAndSwap(0, int32(l)) {
		return readline.CharEnter, true
	}
	return c, false
}
