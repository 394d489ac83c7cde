package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/chzyer/readline"
	"github.com/openheim/openheim/commands/tui"
	"github.com/openheim/openheim/runtime/childproc"
	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm/retry"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
)

// historyFile keeps the REPL's input history across runs.
const historyFile = "chat_history"

// repl is the interactive chat on a terminal.
type repl struct {
	c     *chat
	rl    *readline.Instance
	stdin io.Closer     // readline's reader of the terminal
	keys  *keyReader    // single-key answers (permission questions)
	out   *promptWriter // where everything the chat prints goes

	mu      sync.Mutex
	cancel  context.CancelFunc // of the running turn or slash command
	cancels int                // Ctrl-Cs since it started
	quit    bool               // SIGTERM: leave after the running turn
}

// newREPL sets the terminal up: readline, colours, and warnings printed
// around the prompt rather than through it.
func (c *chat) newREPL() (*repl, error) {
	style, err := tui.NewStyle(c.cfg.TUI.ThemeColor, c.ios.Color && c.ios.OutTTY)
	if err != nil {
		fmt.Fprintf(c.ios.ErrOut, "openheim: warning: tui.theme_color: %v\n", err)
	}
	c.style = style
	keys := &keyReader{}
	stdin := readline.NewCancelableStdin(newPasteReader(c.ios.In))
	rl, err := readline.NewEx(&readline.Config{
		Prompt:                 c.promptString(),
		HistoryFile:            privateHistory(c.ios, c.home),
		HistoryLimit:           1000,
		DisableAutoSaveHistory: true,
		HistorySearchFold:      true,
		AutoComplete:           chatCompleter{c},
		FuncFilterInputRune:    keys.filter,
		Stdin:                  stdin,
		Stdout:                 c.ios.Out,
		Stderr:                 c.ios.ErrOut,
	})
	if err != nil {
		return nil, failure(fmt.Errorf("chat: %w", err))
	}
	// The transcript passes the config's redactor (error lines quote
	// provider errors); readline's own writes (the input line) do not.
	red := c.ios.Redactor()
	reading := rl.Terminal.IsReading
	r := &repl{c: c, rl: rl, stdin: stdin, keys: keys,
		out: &promptWriter{plain: red.Writer(c.ios.Out), around: red.Writer(rl.Stdout()), reading: reading}}
	// Changed in place: what the runtime warns about from its own
	// goroutines (an MCP server failing to start) must go around the
	// prompt too, and the runtime writes to the factory's streams.
	c.ios.ErrOut = &promptWriter{plain: c.ios.ErrOut, around: red.Writer(rl.Stderr()), asking: r.out.flag(), reading: reading}
	c.out = r.out
	c.pick = r.ask
	return r, nil
}

// promptWriter writes around readline's prompt only while a prompt is
// shown (warnings at the input prompt, turn output during a permission
// question). Otherwise it writes plainly: readline still counts itself as
// reading for a moment after Enter, and would redraw its prompt into the
// output.
type promptWriter struct {
	plain, around io.Writer
	asking        *atomic.Bool // shared with the stdout writer; nil: its own
	own           atomic.Bool
	// reading reports whether readline reads the terminal: it prints its
	// prompt a moment before, and redraws the prompt after a write only
	// once reading (a warning landing in between would leave the input
	// line without its prompt).
	reading func() bool
}

func (w *promptWriter) flag() *atomic.Bool {
	if w.asking != nil {
		return w.asking
	}
	return &w.own
}

func (w *promptWriter) Write(p []byte) (int, error) {
	if !w.flag().Load() {
		return w.plain.Write(p)
	}
	for i := 0; w.reading != nil && !w.reading() && i < 100; i++ {
		time.Sleep(time.Millisecond)
	}
	return w.around.Write(p)
}

// run is the REPL until the user quits.
func (r *repl) run(ctx context.Context) error {
	defer r.close()
	fmt.Fprint(r.c.ios.Out, pasteOn)
	defer fmt.Fprint(r.c.ios.Out, pasteOff)
	stop := r.handleSignals()
	defer stop()
	r.banner()
	return r.loop(ctx)
}

// close stops readline. Its reader is closed first: a single-key answer
// leaves readline's terminal loop reading ahead, and readline's own Close
// would wait for that read forever (it closes its wrapper of the reader,
// not the reader).
func (r *repl) close() {
	r.stdin.Close()
	r.rl.Close()
}

// privateHistory returns the history file's path, created readable by the
// user only: prompts may hold things nobody else should read.
func privateHistory(ios *IOStreams, home string) string {
	path := filepath.Join(home, historyFile)
	if err := os.MkdirAll(home, 0o700); err == nil {
		if f, err := os.OpenFile(path, os.O_CREATE|os.O_RDONLY, 0o600); err == nil {
			f.Close()
			return path
		}
	}
	fmt.Fprintf(ios.ErrOut, "openheim: warning: cannot keep the input history in %s; it lasts this run only\n", path)
	return ""
}

func (c *chat) promptString() string {
	if c.readOnly {
		return c.style.Dim("architect ") + c.style.AccentText("›") + " "
	}
	return c.style.AccentText("›") + " "
}

func (r *repl) banner() {
	c := r.c
	mode := " · " + c.mode() + " mode"
	if c.agent != "" {
		mode = "" // the agent's own (/mode)
	}
	fmt.Fprintf(c.out, "%s %s · %s%s\n", c.style.Bold(c.style.AccentText("openheim")), c.version, c.currentModel(), mode)
	fmt.Fprintln(c.out, c.style.Dim("/help lists the commands · a line ending in \\ continues · Ctrl-C cancels a turn · Ctrl-D quits"))
	if c.sessionID != "" {
		if err := c.recap(); err != nil {
			fmt.Fprintln(c.out, c.style.Fail("✗ "+err.Error()))
		}
	}
}

func (r *repl) loop(ctx context.Context) error {
	c := r.c
	emptyInterrupts := 0
	for !r.quitting() {
		text, err := r.readInput()
		switch {
		case errors.Is(err, readline.ErrInterrupt):
			if text != "" {
				emptyInterrupts = 0
				continue
			}
			if emptyInterrupts++; emptyInterrupts >= 2 {
				return nil
			}
			fmt.Fprintln(c.out, c.style.Dim("(press Ctrl-C again, or Ctrl-D, to quit)"))
			continue
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return failure(fmt.Errorf("chat: reading input: %w", err))
		}
		emptyInterrupts = 0
		if strings.TrimSpace(text) == "" {
			continue
		}
		r.rl.SaveHistory(historyEntry(text))
		trimmed := strings.TrimSpace(text)
		switch {
		case strings.HasPrefix(trimmed, "//"):
			r.turn(ctx, trimmed[1:])
		case strings.HasPrefix(trimmed, "/") && c.isAgentCommand(ctx, trimmed):
			r.turn(ctx, trimmed) // the agent's own command
		case strings.HasPrefix(trimmed, "/"):
			cmdCtx := r.begin(ctx)
			err := c.runSlash(cmdCtx, trimmed)
			r.end()
			if errors.Is(err, errQuit) {
				return nil
			}
			if err != nil {
				fmt.Fprintln(c.out, c.style.Fail("✗ "+err.Error()))
			}
		default:
			r.turn(ctx, text)
		}
	}
	return nil
}

// readInput reads one input: lines ending in \ continue on the next.
// Ctrl-C returns ErrInterrupt with what was typed ("" at an empty prompt).
func (r *repl) readInput() (string, error) {
	var lines []string
	r.rl.SetPrompt(r.c.promptString())
	for {
		r.out.flag().Store(true)
		line, err := r.rl.Readline()
		r.out.flag().Store(false)
		if errors.Is(err, readline.ErrInterrupt) {
			return strings.Join(append(lines, line), ""), err
		}
		if err != nil {
			return "", err
		}
		line = restoreInput(line)
		if rest, ok := strings.CutSuffix(line, `\`); ok {
			lines = append(lines, rest)
			r.rl.SetPrompt(r.c.style.Dim("… "))
			continue
		}
		return strings.Join(append(lines, line), "\n"), nil
	}
}

// ask reads one answer with its own prompt (a permission question, a pick).
func (r *repl) ask(prompt string) (string, error) {
	r.rl.SetPrompt(prompt)
	r.out.flag().Store(true)
	defer func() {
		r.out.flag().Store(false)
		r.rl.SetPrompt(r.c.promptString())
	}()
	line, err := r.rl.Readline()
	return restoreInput(line), err
}

// turn runs one prompt, rendering it as it streams.
func (r *repl) turn(ctx context.Context, text string) {
	c := r.c
	render := newChatRenderer(r.out, c.style, c.thinking)
	queue := event.NewQueue(render, 4096)
	turnCtx := r.begin(ctx)
	defer r.end()
	asker := &replAsker{r: r, render: render, queue: queue}
	defer hideTyping(c.ios.In)()
	render.begin()
	turnCtx = retry.WithObserver(turnCtx, render.retrying)
	meta, end, err := c.turn(turnCtx, []message.Block{message.Text(text)}, queue, asker)
	queue.Close()
	if err != nil {
		render.pause()
		var locked *session.LockedError
		msg := err.Error()
		switch {
		case errors.As(err, &locked):
			msg += " (wait for that turn to finish, or /fork)"
		case errors.As(err, new(*engine.UsageError)):
			msg += " (/model lists the models)"
		}
		fmt.Fprintln(c.out, c.style.Fail("✗ "+msg))
		return
	}
	why, hint := "", ""
	if code, reason := outcome(turnCtx, end, nil); code != ExitOK && code != ExitInterrupt {
		why = reason
		if t, ok := explainProvider(c.cfg, deref(meta.Provider), deref(meta.Model), end.Err); ok {
			why, hint = t.Msg, t.Hint
		}
	}
	render.finish(end, why, hint)
}

// begin makes ctx's child the one Ctrl-C cancels, until end.
func (r *repl) begin(ctx context.Context) context.Context {
	ctx, cancel := context.WithCancel(ctx)
	r.mu.Lock()
	r.cancel, r.cancels = cancel, 0
	r.mu.Unlock()
	return ctx
}

func (r *repl) end() {
	r.mu.Lock()
	if r.cancel != nil {
		r.cancel()
	}
	r.cancel = nil
	r.mu.Unlock()
}

func (r *repl) quitting() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.quit
}

// handleSignals turns Ctrl-C during a turn (the terminal is not in raw mode
// then, so it arrives as SIGINT) into cancelling the turn; a second one
// while the turn winds down exits. SIGTERM cancels and quits.
func (r *repl) handleSignals() (stop func()) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case sig := <-ch:
				r.mu.Lock()
				if sig == syscall.SIGTERM {
					r.quit = true
				}
				if r.cancel != nil {
					r.cancel()
					r.cancels++
				}
				force := r.cancels >= 2
				r.mu.Unlock()
				if force {
					fmt.Fprint(r.c.ios.Out, pasteOff)
					childproc.KillAll() // the cleanup of a normal return is skipped
					os.Exit(ExitInterrupt)
				}
				if sig == syscall.SIGTERM {
					r.close() // a prompt waiting for input returns io.EOF
				}
			}
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}
