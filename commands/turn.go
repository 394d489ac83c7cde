package commands

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/openheim/openheim/protocol/ndjson"
	"github.com/openheim/openheim/runtime/childproc"
	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm/retry"
	"github.com/openheim/openheim/runtime/session"
)

// What prompt and chat share to run turns and report how they ended.

// turnOutput is where one turn's events go: NDJSON (--json) or the text
// renderer, behind a queue that keeps a slow stdout reader from stalling
// the turn.
type turnOutput struct {
	ios   *IOStreams
	enc   *ndjson.Encoder
	text  *textRenderer
	queue *event.Queue
}

func newTurnOutput(ios *IOStreams, asJSON bool) *turnOutput {
	o := &turnOutput{ios: ios}
	if asJSON {
		o.enc = ndjson.NewEncoder(ios.Out).WithRedactor(ios.Redactor())
		o.queue = event.NewQueue(withRetryLines(ios, o.enc), 4096)
	} else {
		o.text = newTextRenderer(ios)
		o.queue = event.NewQueue(o.text, 4096)
	}
	return o
}

// finish ends the output of a turn that ran: the NDJSON result line, or
// the text's last line break.
func (o *turnOutput) finish(id string, end event.End, code int, why string) {
	if o.enc != nil {
		o.enc.Finish(id, end, code, why)
	} else {
		o.text.finish()
	}
}

// retrying says a call is retried: a status line on a terminal (the text
// renderer's), else one line on stderr per retry. The model calls' retries
// come as events (event.Retry) through the turn's sink; this is for the
// others (retry.WithObserver).
func (o *turnOutput) retrying(a retry.Attempt) {
	if o.text != nil {
		o.text.retrying(a)
		return
	}
	fmt.Fprintf(o.ios.ErrOut, "openheim: %s\n", retryLine(a))
}

// withRetryLines is sink with the turn's retries (which NDJSON does not
// carry: they are not session updates) said on stderr, one line each.
func withRetryLines(ios *IOStreams, sink event.Sink) event.Sink {
	return event.SinkFunc(func(e event.Event) {
		if e.Kind == event.Retry && e.Retry != nil {
			fmt.Fprintf(ios.ErrOut, "openheim: %s\n", retryLine(retryAttempt(e.Retry)))
			return
		}
		sink.Emit(e)
	})
}

// retryAttempt is a model call's retry as its event tells it.
func retryAttempt(r *event.RetryInfo) retry.Attempt {
	return retry.Attempt{What: "model call", N: r.Attempt, Max: r.MaxRetries, Wait: r.Delay, Asked: r.Asked, Err: errors.New(r.Err)}
}

// retryLine is a retry in one line: "model call failed (HTTP 503:
// overloaded); retrying in 1.2s (1 of 3)".
func retryLine(a retry.Attempt) string {
	asked := ""
	if a.Asked {
		asked = " as the server asked (Retry-After)"
	}
	return fmt.Sprintf("%s failed (%s); retrying in %s%s (%d of %d)", a.What, oneLine(a.Err.Error(), 80), shortDuration(a.Wait), asked, a.N, a.Max)
}

var errTimeout = errors.New("--timeout expired")

// turnRunner is what runs the turns: the engine, or with agent set the
// external ACP agent of that name (started on first use, stopped by the
// returned func).
func turnRunner(eng *engine.Engine, agent string) (engine.Runner, func()) {
	if agent == "" {
		return eng, func() {}
	}
	r, stop := eng.ExternalAgent(agent)
	return r, stop
}

// turnConfig loads the config with the flags that commands running turns
// share applied: --work-dir and --allow-shell.
func turnConfig(load func() (*config.Config, error), workDir string, allowShell bool) (*config.Config, error) {
	cfg, err := load()
	if err != nil {
		return nil, err
	}
	if workDir != "" {
		if err := cfg.SetWorkDir(workDir); err != nil {
			return nil, usageErr(fmt.Errorf("--work-dir: %w", err), "")
		}
	}
	if allowShell {
		cfg.AllowShell = true
	}
	return cfg, nil
}

// resolveSession turns --session (id, prefix or title) or --continue into a
// session id, forking it with --fork; "" starts a new session. cmd names the
// command in errors.
func resolveSession(s *Sessions, cmd, ref string, cont, fork bool, workDir string) (string, error) {
	var id string
	switch {
	case ref != "":
		m, err := s.find(cmd+": --session", ref)
		if err != nil {
			return "", err
		}
		id = m.ID
	case cont:
		m, err := session.Latest(s.Files, workDir)
		if errors.Is(err, session.ErrNotFound) {
			return "", usageErr(fmt.Errorf("%s: --continue: no earlier session in %s", cmd, workDir), "start one without --continue")
		}
		if err != nil {
			return "", failure(err)
		}
		id = m.ID
	}
	if id == "" || !fork {
		return id, nil
	}
	forked, err := session.Fork(s.Store, id, -1, time.Now())
	if err != nil {
		return "", failure(fmt.Errorf("%s: --fork: %w", cmd, err))
	}
	return forked.ID, nil
}

// outcome maps how the turn ended to an exit code and a one-line reason.
func outcome(ctx context.Context, end event.End, sig os.Signal) (int, string) {
	switch {
	case end.StopReason == event.StopCancelled && errors.Is(context.Cause(ctx), errTimeout):
		return ExitTimeout, "the turn was cancelled: --timeout expired"
	case end.StopReason == event.StopCancelled && sig != nil:
		n := 2
		if s, ok := sig.(syscall.Signal); ok {
			n = int(s)
		}
		return 128 + n, fmt.Sprintf("the turn was cancelled by %v", sig)
	case end.StopReason == event.StopCancelled && ctx.Err() == nil:
		// Nobody here cancelled it: an external agent ended its own turn
		// (Codex does when a permission it asked for is refused).
		return ExitStopped, "the turn stopped early: the agent cancelled it itself (as Codex does when openheim refuses it a permission)"
	case end.StopReason == event.StopCancelled:
		return ExitInterrupt, "the turn was cancelled"
	case end.Err != nil:
		return ExitFailure, end.Err.Error()
	case end.StopReason == event.StopMaxTurnRequests:
		return ExitStopped, fmt.Sprintf("the turn stopped early: max_turn_requests (%d model calls)", end.Iterations)
	case end.StopReason == event.StopMaxTokens || end.StopReason == event.StopRefusal:
		return ExitStopped, "the turn stopped early: " + string(end.StopReason)
	}
	return ExitOK, ""
}

func hintFor(code int, id string) string {
	switch code {
	case ExitStopped, ExitTimeout, ExitInterrupt:
		return fmt.Sprintf("what was done is saved; continue with 'openheim prompt --session %s'", id)
	}
	return ""
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// interrupter turns the first SIGINT/SIGTERM into a cancelled turn (so the
// session keeps what was done) and a second one into an immediate exit.
type interrupter struct {
	ch     chan os.Signal
	got    chan os.Signal
	cancel context.CancelFunc
}

func interruptible(parent context.Context) (context.Context, *interrupter) {
	ctx, cancel := context.WithCancel(parent)
	it := &interrupter{ch: make(chan os.Signal, 2), got: make(chan os.Signal, 1), cancel: cancel}
	signal.Notify(it.ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig, ok := <-it.ch
		if !ok {
			return
		}
		it.got <- sig
		cancel()
		if sig, ok := <-it.ch; ok {
			n := 2
			if s, ok := sig.(syscall.Signal); ok {
				n = int(s)
			}
			childproc.KillAll() // the cleanup of a normal return is skipped
			os.Exit(128 + n)
		}
	}()
	return ctx, it
}

func (it *interrupter) signal() os.Signal {
	select {
	case s := <-it.got:
		it.got <- s
		return s
	default:
		return nil
	}
}

func (it *interrupter) release() {
	signal.Stop(it.ch)
	close(it.ch)
	it.cancel()
}
