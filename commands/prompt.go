package commands

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/openheim/openheim/protocol/acp/host"
	"github.com/openheim/openheim/protocol/ndjson"
	"github.com/openheim/openheim/runtime/childproc"
	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/mcp"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/permission"
	"github.com/openheim/openheim/runtime/session"
	"github.com/urfave/cli/v3"
)

// maxAttachment caps one --file, so a mistaken path to a huge log does not
// blow the context window (and the bill) in one go.
const maxAttachment = 1 << 20

// PromptOptions is everything `openheim prompt` needs.
type PromptOptions struct {
	IO            *IOStreams
	ConfigPath    string
	Text          string // "" or "-" reads stdin
	Files         []string
	Model         string
	Provider      string
	SessionID     string
	Continue      bool
	MaxIterations int
	AllowShell    bool
	WorkDir       string
	Timeout       time.Duration
	JSON          bool
	Record        string
	Fork          bool
	DenyAsk       bool
	Version       string   // reported to MCP servers
	Skills        []string // nil: the session's (or default_skills)
	Agent         string   // an external ACP agent runs the turn ([acp_agents] or a preset)
}

func newCmdPrompt(ios *IOStreams, version string) *cli.Command {
	return &cli.Command{
		Name:      "prompt",
		Usage:     "run one agent turn and print the answer",
		ArgsUsage: "[TEXT|-]",
		Description: `Runs one turn: the prompt goes to the model, which may call tools inside the
work directory, until it answers. The prompt comes from the arguments, or from
stdin when there is no argument or it is "-". Each run creates a session, or
continues one with --session or --continue.

Tool calls pass the [permissions] rules of the config: denied calls fail, and
calls the rules say to ask about run (there is no one to ask) unless
--deny-ask refuses them.

Plain output streams the answer to stdout (tool activity goes to stderr on a
terminal). --json prints NDJSON: a session_info_update line, every ACP
session/update, and the prompt result last (see docs/ndjson.md).

Exit codes: 0 done; 1 runtime failure; 2 usage or configuration error;
3 stopped early (max_turn_requests, max_tokens, refusal); 124 --timeout;
130 interrupted (Ctrl-C).

Examples:
  openheim prompt "what does main.go do?"
  git diff | openheim prompt "review this diff"
  openheim prompt --file notes.txt "turn these notes into a checklist"
  openheim prompt --continue "now write tests for it"
  openheim prompt --json --timeout 5m "fix the failing test" > events.ndjson
  openheim prompt --model gpt-4o-mini --max-iterations 3 "list the TODOs"
  openheim prompt --record run.json "fix the bug"   # replay later with kind = "replay"`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "model", Aliases: []string{"m"}, Usage: "model to use (default: the provider's default_model)"},
			&cli.StringFlag{Name: "provider", Aliases: []string{"p"}, Usage: "provider to use (default: default_provider)"},
			&cli.StringFlag{Name: "session", Aliases: []string{"s"}, Usage: "continue the session `ID` (or a unique id prefix, or its exact title)"},
			&cli.BoolFlag{Name: "fork", Usage: "with --session or --continue: continue a copy, leaving the original as it is"},
			&cli.BoolFlag{Name: "continue", Aliases: []string{"c"}, Usage: "continue the latest session in the work directory"},
			&cli.IntFlag{Name: "max-iterations", Usage: "model calls allowed in this turn (default: max_iterations)"},
			&cli.BoolFlag{Name: "allow-shell", Usage: "offer the execute_command tool"},
			&cli.StringFlag{Name: "work-dir", Aliases: []string{"C"}, Usage: "work directory the tools are confined to (default: work_dir, else cwd)"},
			&cli.DurationFlag{Name: "timeout", Usage: "cancel the turn after `DURATION` (exit 124)"},
			&cli.StringSliceFlag{Name: "file", Aliases: []string{"f"}, Usage: "attach the file at `PATH` as a text block (repeatable)"},
			&cli.BoolFlag{Name: "json", Usage: "print NDJSON events instead of plain text"},
			&cli.StringFlag{Name: "record", Usage: "write the model replies of this run into a replay cassette at `FILE`"},
			&cli.StringSliceFlag{Name: "skills", Usage: "activate these skills (`a,b`; skills/<name>.md) for the session; default: the session's, or default_skills for a new one"},
			&cli.BoolFlag{Name: "deny-ask", Usage: "deny tool calls that the permission rules say to ask about; by default prompt allows them, as there is no one to ask"},
			&cli.StringFlag{Name: "agent", Aliases: []string{"a"}, Usage: "let the external ACP agent `NAME` run the turn ('openheim acp agents' lists them)"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() > 1 {
				return usageErr(errors.New("prompt: give the prompt as one quoted argument"), `openheim prompt "your prompt"`)
			}
			if cmd.Bool("continue") && cmd.String("session") != "" {
				return usageErr(errors.New("prompt: --session and --continue are mutually exclusive"), "")
			}
			if cmd.Bool("fork") && !cmd.Bool("continue") && cmd.String("session") == "" {
				return usageErr(errors.New("prompt: --fork needs --session or --continue"), "")
			}
			if cmd.IsSet("max-iterations") && cmd.Int("max-iterations") < 1 {
				return usageErr(errors.New("prompt: --max-iterations must be at least 1"), "")
			}
			if cmd.IsSet("timeout") && cmd.Duration("timeout") <= 0 {
				return usageErr(errors.New("prompt: --timeout must be positive"), "")
			}
			return promptRun(ctx, &PromptOptions{Version: version,
				IO: ios, ConfigPath: cmd.Root().String("config"), Text: cmd.Args().First(),
				Files: cmd.StringSlice("file"), Model: cmd.String("model"), Provider: cmd.String("provider"),
				SessionID: cmd.String("session"), Continue: cmd.Bool("continue"),
				MaxIterations: cmd.Int("max-iterations"), AllowShell: cmd.Bool("allow-shell"),
				WorkDir: cmd.String("work-dir"), Timeout: cmd.Duration("timeout"), JSON: cmd.Bool("json"),
				Record: cmd.String("record"), Fork: cmd.Bool("fork"), DenyAsk: cmd.Bool("deny-ask"),
				Skills: skillsFlag(cmd), Agent: cmd.String("agent"),
			})
		},
	}
}

func promptRun(ctx context.Context, opts *PromptOptions) error {
	ios := opts.IO
	cfg, err := turnConfig(opts.ConfigPath, opts.WorkDir, opts.AllowShell, ios)
	if err != nil {
		return err
	}
	if opts.MaxIterations > 0 {
		cfg.MaxIterations = opts.MaxIterations
	}
	input, err := promptInput(opts)
	if err != nil {
		return err
	}
	env, err := openSessions(ios)
	if err != nil {
		return err
	}
	sessionID, err := resolveSession(env, "prompt", opts.SessionID, opts.Continue, opts.Fork, cfg.WorkDir)
	if err != nil {
		return err
	}

	ctx, stop := interruptible(ctx)
	defer stop.release()
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, opts.Timeout, errTimeout)
		defer cancel()
	}

	var servers *mcp.Manager
	if opts.Agent == "" { // an external agent gets the servers passed on instead
		servers = startMCP(ctx, cfg, ios, opts.Version)
	}
	if servers != nil {
		defer servers.Close()
	}
	eng := withMCP(newEngine(cfg, env), servers)
	defer withMemory(eng, cfg, ios)()
	runner, closeRunner := turnRunner(eng, opts.Agent)
	defer closeRunner()
	// The queue keeps a slow stdout reader from stalling the turn.
	var enc *ndjson.Encoder
	var text *textRenderer
	var queue *event.Queue
	if opts.JSON {
		enc = ndjson.NewEncoder(ios.Out).WithRedactor(ios.Redactor())
		queue = event.NewQueue(enc, 4096)
	} else {
		text = newTextRenderer(ios)
		queue = event.NewQueue(text, 4096)
	}
	var asker permission.Asker
	if opts.DenyAsk {
		asker = permission.DenyAsker
	}
	meta, end, err := runner.Prompt(ctx, engine.Request{
		SessionID: sessionID, Provider: opts.Provider, Model: opts.Model,
		Input: input, Sink: queue, Record: opts.Record, Gate: engine.Asking(asker), Skills: opts.Skills,
	})
	queue.Close()
	if err != nil {
		var ue *engine.UsageError
		var locked *session.LockedError
		switch {
		case errors.As(err, &ue):
			return usageErr(fmt.Errorf("prompt: %w", err), "")
		case errors.As(err, &locked):
			return &ExitError{Code: ExitFailure, Err: fmt.Errorf("prompt: %w", err),
				Hint: "wait for that turn to finish, or continue a copy with --fork"}
		case host.IsAuthRequired(err):
			return &ExitError{Code: ExitFailure, Err: fmt.Errorf("prompt: %w", err),
				Hint: "log the agent in with its own CLI first (e.g. `claude` or `codex login`), then retry"}
		}
		return failure(fmt.Errorf("prompt: %w", err))
	}
	code, why := outcome(ctx, end, stop.signal())
	if enc != nil {
		enc.Finish(meta.ID, end, code, why)
	} else {
		text.finish()
	}
	if code == ExitOK {
		return nil
	}
	return &ExitError{Code: code, Err: errors.New("prompt: " + why), Hint: hintFor(code, meta.ID)}
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
func turnConfig(path, workDir string, allowShell bool, ios *IOStreams) (*config.Config, error) {
	cfg, err := loadConfig(path, ios)
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
func resolveSession(env *sessionsEnv, cmd, ref string, cont, fork bool, workDir string) (string, error) {
	var id string
	switch {
	case ref != "":
		m, err := env.find(cmd+": --session", ref)
		if err != nil {
			return "", err
		}
		id = m.ID
	case cont:
		m, err := session.Latest(env.files, workDir)
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
	forked, err := session.Fork(env.store, id, -1, time.Now())
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

// promptInput builds the user message: the prompt text, then attachments.
func promptInput(opts *PromptOptions) ([]message.Block, error) {
	text := opts.Text
	if text == "" || text == "-" {
		if text == "" && opts.IO.InTTY {
			return nil, usageErr(errors.New("prompt: no prompt given"), `openheim prompt "your prompt", or pipe it on stdin`)
		}
		data, err := io.ReadAll(opts.IO.In)
		if err != nil {
			return nil, failure(fmt.Errorf("prompt: reading stdin: %w", err))
		}
		text = string(data)
	}
	if strings.TrimSpace(text) == "" {
		return nil, usageErr(errors.New("prompt: the prompt is empty"), "")
	}
	blocks := []message.Block{message.Text(text)}
	for _, path := range opts.Files {
		b, err := attachment(path)
		if err != nil {
			return nil, err
		}
		blocks = append(blocks, b)
	}
	return blocks, nil
}

func attachment(path string) (message.Block, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return message.Block{}, usageErr(fmt.Errorf("--file: %w", err), "")
	}
	if len(data) > maxAttachment {
		return message.Block{}, usageErr(fmt.Errorf("--file %s: %d bytes is over the %d byte limit", path, len(data), maxAttachment), "")
	}
	if bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data) {
		return message.Block{}, usageErr(fmt.Errorf("--file %s: not a text file", path), "")
	}
	return message.Text(fmt.Sprintf("<file path=%q>\n%s\n</file>", path, strings.TrimSuffix(string(data), "\n"))), nil
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
