package commands

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"

	"github.com/openheim/openheim/protocol/ndjson"
	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm/retry"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/permission"
)

// scriptItem is one step of a chat script: a prompt or a slash command.
type scriptItem struct {
	line  int // where it starts, for messages
	slash bool
	text  string
}

// maxScriptLine bounds one script line (a pasted document on one line).
const maxScriptLine = 4 << 20

// heredocRE matches a line that opens a <<WORD block, with optional text
// before it that becomes the prompt's first line.
var heredocRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:(.*\S)\s+)?<<\s*'?([A-Za-z_][A-Za-z0-9_]*)'?\s*$`)
})

// readScript parses a chat script as it arrives, calling step for each
// item until step returns false. A plain line is a prompt; a line starting
// with / is a slash command (// sends a prompt starting with /); # starts
// a comment; a trailing \ continues a line; <<WORD ... WORD sends the lines
// between as one prompt.
func readScript(r io.Reader, step func(scriptItem) bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxScriptLine)
	n := 0
	next := func() (string, bool) {
		if !sc.Scan() {
			return "", false
		}
		n++
		return strings.TrimSuffix(sc.Text(), "\r"), true
	}
	for {
		line, ok := next()
		if !ok {
			break
		}
		start := n
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "", strings.HasPrefix(trimmed, "#"):
			continue
		case heredocRE().MatchString(trimmed):
			m := heredocRE().FindStringSubmatch(trimmed)
			var body []string
			if m[1] != "" {
				body = append(body, m[1])
			}
			closed := false
			for {
				l, ok := next()
				if !ok {
					break
				}
				if strings.TrimSpace(l) == m[2] {
					closed = true
					break
				}
				body = append(body, l)
			}
			if !closed {
				return fmt.Errorf("line %d: the <<%s block is never closed by a line %q", start, m[2], m[2])
			}
			if !step(scriptItem{line: start, text: strings.Join(body, "\n")}) {
				return nil
			}
			continue
		}
		for strings.HasSuffix(line, `\`) {
			more, ok := next()
			if !ok {
				break
			}
			line = strings.TrimSuffix(line, `\`) + "\n" + more
		}
		line = strings.TrimSuffix(line, `\`)
		item := scriptItem{line: start, text: strings.TrimSpace(line)}
		if strings.HasPrefix(item.text, "//") {
			item.text = item.text[1:]
		} else if strings.HasPrefix(item.text, "/") {
			item.slash = true
		}
		if !step(item) {
			return nil
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("line %d: longer than %d bytes", n+1, maxScriptLine)
		}
		return err
	}
	return nil
}

// script runs a chat script from in: the exit code is that of the first
// failing step (each failure is reported on stderr as it happens).
func (c *chat) script(ctx context.Context, in io.Reader, opts *ChatOptions) error {
	ctx, stop := interruptible(ctx)
	defer stop.release()
	var enc *ndjson.Encoder
	var steps *stepWriter
	if opts.JSON {
		enc = ndjson.NewEncoder(c.ios.Out).WithRedactor(c.ios.Redactor())
	} else {
		steps = &stepWriter{w: c.ios.Out}
		ios := *c.ios
		ios.Out = steps
		c.ios, c.out = &ios, steps
	}
	first := &ExitError{Code: ExitOK}
	fail := func(line, code int, err error, hint ...string) {
		fmt.Fprintf(c.ios.ErrOut, "openheim: line %d: %v\n", line, err)
		for _, h := range hint {
			fmt.Fprintf(c.ios.ErrOut, "hint: %s\n", h)
		}
		if first.Code == ExitOK {
			first.Code, first.Err = code, fmt.Errorf("chat: line %d: %w", line, err)
		}
	}
	perr := readScript(in, func(it scriptItem) bool {
		if ctx.Err() != nil {
			return false
		}
		if steps != nil {
			steps.next()
		}
		if it.slash && !c.isAgentCommand(ctx, it.text) {
			err := c.runSlash(ctx, it.text)
			if errors.Is(err, errQuit) {
				return false
			}
			if err != nil {
				code := ExitFailure
				var se *slashErr
				if errors.As(err, &se) {
					code = ExitUsage
				}
				fail(it.line, code, err)
				return opts.KeepGoing
			}
			return true
		}
		code, why, hint := c.scriptTurn(ctx, it, enc, stop)
		if code != ExitOK {
			fail(it.line, code, errors.New(why), hint...)
			// An interrupted script stops whatever --keep-going says.
			return opts.KeepGoing && stop.signal() == nil
		}
		return true
	})
	if perr != nil {
		fail(0, ExitUsage, perr)
		first.Err = fmt.Errorf("chat: %w", perr)
	}
	if first.Code == ExitOK {
		return nil
	}
	first.Silent = true
	return first
}

// scriptTurn runs one prompt of a script and returns its exit code and,
// when it failed, why (and a hint when there is an obvious fix).
func (c *chat) scriptTurn(ctx context.Context, it scriptItem, enc *ndjson.Encoder, stop *interrupter) (int, string, []string) {
	var sink event.Sink
	var text *textRenderer
	if enc != nil {
		// As prompt does, the failed MCP servers are told once, by the
		// first turn that starts.
		reported := c.mcpReported
		sink = withRetryLines(c.ios, event.SinkFunc(func(ev event.Event) {
			if ev.Kind != event.MCPServerFailed || !reported {
				enc.Emit(ev)
			}
		}))
	} else {
		text = newTextRenderer(c.ios)
		sink = text
	}
	queue := event.NewQueue(sink, 4096)
	var asker permission.Asker
	if c.denyAsk {
		asker = permission.DenyAsker
	}
	ctx = retry.WithObserver(ctx, func(a retry.Attempt) { fmt.Fprintf(c.ios.ErrOut, "openheim: %s\n", retryLine(a)) })
	meta, end, err := c.turn(ctx, []message.Block{message.Text(it.text)}, queue, asker)
	queue.Close()
	c.mcpReported = c.mcpReported || err == nil
	if err != nil {
		var ue *engine.UsageError
		if errors.As(err, &ue) {
			return ExitUsage, err.Error(), nil
		}
		return ExitFailure, err.Error(), nil
	}
	code, why := outcome(ctx, end, stop.signal())
	if enc != nil {
		enc.Finish(meta.ID, end, code, why)
	} else {
		text.finish()
	}
	if t, ok := explainProvider(c.cfg, deref(meta.Provider), deref(meta.Model), end.Err); ok && code == ExitFailure {
		return code, t.Msg, []string{t.Hint}
	}
	return code, why, nil
}

// stepWriter puts a blank line between the outputs of a script's steps
// (plain mode), so answers and command output do not run together.
type stepWriter struct {
	w          io.Writer
	wrote, sep bool
}

// next starts a step: its first output is preceded by a blank line if the
// steps before printed anything.
func (s *stepWriter) next() {
	if s.wrote {
		s.sep, s.wrote = true, false
	}
}

func (s *stepWriter) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if s.sep {
		s.sep = false
		if _, err := s.w.Write([]byte("\n")); err != nil {
			return 0, err
		}
	}
	s.wrote = true
	return s.w.Write(p)
}
