package commands

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/openheim/openheim/protocol/acp/host"
	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm/retry"
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
	IO       *IOStreams
	Config   func() (*config.Config, error)
	Sessions func() (*Sessions, error)
	Runtime  func(ctx context.Context, cfg *config.Config, s *Sessions, withMCP bool) (*Runtime, func())

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
	Skills        []string // nil: the session's (or default_skills)
	Agent         string   // an external ACP agent runs the turn ([acp_agents] or a preset)
	Mode          string   // code or architect; with an agent, one of its modes
}

const promptDescription = `Runs one turn: the prompt goes to the model, which may call tools inside the
work directory, until it answers. The prompt comes from the argument, or from
stdin when there is no argument or it is "-". With both an argument and piped
input, the model gets the prompt, then the piped text as an attachment
(<stdin>...</stdin>, up to 1 MiB), as 'git diff | openheim prompt "review"'
expects. Each run creates a session, or continues one with --session or
--continue.

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
  openheim prompt -m openai/gpt-4.1-mini --max-iterations 3 "list the TODOs"
  openheim prompt --record run.json "fix the bug"   # replay later with kind = "replay"
  openheim prompt --agent claude-agent-acp --mode plan --model haiku "plan the refactor"
  openheim prompt --session 5d0c --fork "try it another way"   # an agent's session forks on the agent`

func newCmdPrompt(f *Factory, runF func(context.Context, *PromptOptions) error) *cli.Command {
	opts := &PromptOptions{IO: f.IOStreams, Config: f.Config, Sessions: f.Sessions, Runtime: f.Runtime}
	return &cli.Command{
		Name:        "prompt",
		Usage:       "run one agent turn and print the answer",
		ArgsUsage:   "[TEXT|-]",
		Description: promptDescription,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "model", Aliases: []string{"m"}, Usage: "model to use, as `provider/model` or a model of --provider (default: the provider's default_model)"},
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
			&cli.StringFlag{Name: "agent", Aliases: []string{"a"}, Usage: "let the external ACP agent `NAME` run the turn ('openheim acp agents' lists them); a session an agent ran continues on it without this"},
			&cli.StringFlag{Name: "mode", Usage: "run in `MODE`: code (every tool) or architect (read-only); with an agent, one of its modes"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if err := promptFlags(cmd, opts); err != nil {
				return err
			}
			return run(ctx, opts, runF, promptRun)
		},
	}
}

// promptFlags checks prompt's arguments and flags and copies them to opts.
func promptFlags(cmd *cli.Command, opts *PromptOptions) error {
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
	opts.Text, opts.Files = cmd.Args().First(), cmd.StringSlice("file")
	opts.Model, opts.Provider = cmd.String("model"), cmd.String("provider")
	opts.SessionID, opts.Continue, opts.Fork = cmd.String("session"), cmd.Bool("continue"), cmd.Bool("fork")
	opts.MaxIterations, opts.Timeout = cmd.Int("max-iterations"), cmd.Duration("timeout")
	opts.AllowShell, opts.WorkDir = cmd.Bool("allow-shell"), cmd.String("work-dir")
	opts.JSON, opts.Record, opts.DenyAsk = cmd.Bool("json"), cmd.String("record"), cmd.Bool("deny-ask")
	opts.Skills, opts.Agent, opts.Mode = skillsFlag(cmd), cmd.String("agent"), cmd.String("mode")
	return nil
}

func promptRun(ctx context.Context, opts *PromptOptions) error {
	cfg, err := turnConfig(opts.Config, opts.WorkDir, opts.AllowShell)
	if err != nil {
		return err
	}
	if opts.MaxIterations > 0 {
		cfg.MaxIterations = opts.MaxIterations
	}
	provider, model, err := modelFlags(cfg, opts.Provider, opts.Model)
	if err != nil {
		return err
	}
	input, err := promptInput(opts)
	if err != nil {
		return err
	}
	sess, err := opts.Sessions()
	if err != nil {
		return err
	}
	if err := checkAgent(cfg, "prompt", opts.Agent); err != nil {
		return err
	}
	sessionID, err := findSession(sess, "prompt", opts.SessionID, opts.Continue, opts.Agent, cfg.WorkDir)
	if err != nil {
		return err
	}
	agent, err := sessionAgent(sess, "prompt", sessionID, opts.Agent)
	if err != nil {
		return err
	}
	filter, err := promptMode(opts, agent)
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
	// An external agent gets the MCP servers passed on instead.
	rt, release := opts.Runtime(ctx, cfg, sess, agent == "")
	defer release()
	runner, closeRunner := turnRunner(rt.Engine, agent)
	defer closeRunner()
	if hr := hostRunner(runner); hr != nil {
		hr.Initial.Mode = opts.Mode
	}
	if opts.Fork {
		if sessionID, err = forkSession(ctx, runner, sess, "prompt", sessionID); err != nil {
			return err
		}
	}
	out := newTurnOutput(opts.IO, opts.JSON)
	ctx = retry.WithObserver(ctx, out.retrying)
	var asker permission.Asker
	if opts.DenyAsk {
		asker = permission.DenyAsker
	}
	meta, end, err := runner.Prompt(ctx, engine.Request{
		SessionID: sessionID, Provider: provider, Model: model,
		Input: input, Sink: out.queue, Record: opts.Record, Gate: engine.Asking(asker), Skills: opts.Skills, Filter: filter,
	})
	out.queue.Close()
	if err != nil {
		return promptError(err)
	}
	code, why := outcome(ctx, end, stop.signal())
	out.finish(meta.ID, end, code, why)
	return promptExit(cfg, meta, end, code, why)
}

// promptExit is how a turn that ran ends the command: nil, or its exit
// code with why and a hint (a failing provider explained).
func promptExit(cfg *config.Config, meta session.Meta, end event.End, code int, why string) error {
	if code == ExitOK {
		return nil
	}
	hint := hintFor(code, meta.ID)
	if t, ok := explainProvider(cfg, deref(meta.Provider), deref(meta.Model), end.Err); ok && code == ExitFailure {
		why, hint = t.Msg, t.Hint
	}
	return &ExitError{Code: code, Err: errors.New("prompt: " + why), Hint: hint}
}

// modelFlags reads --provider and --model as chat reads --model: a model
// may be written provider/model. A model that --provider (or the default
// provider) does not offer but another provider does is a usage error
// saying which, rather than a request the model's own provider never sees.
func modelFlags(cfg *config.Config, provider, model string) (string, string, error) {
	if p, m, ok := strings.Cut(model, "/"); ok && cfg.Providers[p] != nil {
		if provider != "" && provider != p {
			return "", "", usageErr(fmt.Errorf("prompt: --model %s names provider %q, --provider %q", model, p, provider),
				"give one of them: --model "+model+", or --provider "+provider+" --model "+m)
		}
		provider, model = p, m
	}
	if model == "" || provider == "" && cfg.Providers[cfg.DefaultProvider] == nil {
		return provider, model, nil
	}
	_, err := cfg.Resolve(provider, model)
	if err == nil {
		return provider, model, nil
	}
	for _, ref := range cfg.ModelRefs() {
		if p, m, _ := strings.Cut(ref, "/"); m == model && p != provider {
			return "", "", usageErr(fmt.Errorf("prompt: %w", err), fmt.Sprintf("it is provider %s's model: add --provider %s, or write --model %s", p, p, ref))
		}
	}
	return provider, model, nil // the engine words the error
}

// promptError maps a turn that could not start to its exit code and hint.
func promptError(err error) error {
	var ue *engine.UsageError
	var locked *session.LockedError
	switch {
	case errors.As(err, &ue):
		return usageErr(fmt.Errorf("prompt: %w", err), "")
	case errors.As(err, &locked):
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("prompt: %w", err),
			Hint: "wait for that turn to finish, or continue a copy with --fork"}
	case host.IsAuthRequired(err):
		// The error says how to log this agent in.
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("prompt: %w", err), Hint: "log the agent in, then retry"}
	}
	return failure(fmt.Errorf("prompt: %w", err))
}

// promptInput builds the user message: the prompt text, then what was
// piped on stdin (when the prompt came as an argument), then --file
// attachments.
func promptInput(opts *PromptOptions) ([]message.Block, error) {
	text := opts.Text
	var piped *message.Block
	switch {
	case text == "" || text == "-":
		if text == "" && opts.IO.InTTY {
			return nil, usageErr(errors.New("prompt: no prompt given"), `openheim prompt "your prompt", or pipe it on stdin`)
		}
		data, err := io.ReadAll(opts.IO.In)
		if err != nil {
			return nil, failure(fmt.Errorf("prompt: reading stdin: %w", err))
		}
		text = string(data)
	case opts.IO.InPiped:
		// `git diff | openheim prompt "review this diff"`: both go.
		b, err := stdinAttachment(opts.IO.In)
		if err != nil {
			return nil, err
		}
		piped = b
	}
	if strings.TrimSpace(text) == "" {
		return nil, usageErr(errors.New("prompt: the prompt is empty"), "")
	}
	blocks := []message.Block{message.Text(text)}
	if piped != nil {
		blocks = append(blocks, *piped)
	}
	for _, path := range opts.Files {
		b, err := attachment(path)
		if err != nil {
			return nil, err
		}
		blocks = append(blocks, b)
	}
	return blocks, nil
}

// stdinAttachment reads what was piped alongside a prompt argument as an
// attachment after it, delimited as <stdin>...</stdin> so the model
// tells the two apart; nil when nothing was piped.
func stdinAttachment(in io.Reader) (*message.Block, error) {
	data, err := io.ReadAll(io.LimitReader(in, maxAttachment+1))
	if err != nil {
		return nil, failure(fmt.Errorf("prompt: reading stdin: %w", err))
	}
	if len(data) > maxAttachment {
		return nil, usageErr(fmt.Errorf("prompt: stdin is over the %d byte limit", maxAttachment), "pipe less, or save it to a file in the work directory and ask the agent to read it")
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	if bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data) {
		return nil, usageErr(errors.New("prompt: stdin is not text"), "")
	}
	b := message.Text(fmt.Sprintf("<stdin>\n%s\n</stdin>", strings.TrimSuffix(string(data), "\n")))
	return &b, nil
}

func attachment(path string) (message.Block, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return message.Block{}, usageErr(fmt.Errorf("prompt: --file: %w", err), "")
	}
	if len(data) > maxAttachment {
		return message.Block{}, usageErr(fmt.Errorf("prompt: --file %s: %d bytes is over the %d byte limit", path, len(data), maxAttachment), "")
	}
	if bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data) {
		return message.Block{}, usageErr(fmt.Errorf("prompt: --file %s: not a text file", path), "")
	}
	return message.Text(fmt.Sprintf("<file path=%q>\n%s\n</file>", path, strings.TrimSuffix(string(data), "\n"))), nil
}
