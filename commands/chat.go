package commands

import (
	"context"
	"errors"
	"fmt"

	"github.com/openheim/openheim/runtime/mcp"
	"github.com/urfave/cli/v3"
)

// ChatOptions is everything `openheim chat` needs.
type ChatOptions struct {
	IO         *IOStreams
	ConfigPath string
	Version    string
	SessionID  string
	Continue   bool
	Model      string   // "provider/model" or a bare model; "" = the session's or the default
	Skills     []string // nil: the session's (or default_skills)
	AllowShell bool
	WorkDir    string
	// Script mode only (stdin is not a terminal).
	JSON      bool
	KeepGoing bool
	DenyAsk   bool
	Agent     string // an external ACP agent runs the turns
}

func newCmdChat(ios *IOStreams, version string) *cli.Command {
	return &cli.Command{
		Name:  "chat",
		Usage: "talk with the agent (an interactive REPL, or a script read from stdin)",
		Description: `On a terminal, chat is a REPL: type a prompt and the answer streams back,
with tool calls shown one line each. Lines ending in \ continue on the next
line; pasted text keeps its line breaks. Tab completes slash commands, models,
skills and session ids; the input history is kept in $OPENHEIM_HOME/chat_history.
Ctrl-C cancels a running turn (what was done is kept); Ctrl-C twice at an empty
prompt, Ctrl-D or /exit quits. /help lists the slash commands.

Tool calls the [permissions] rules say to ask about are asked inline:
[y] allow once, [a] always (this session), [n] reject, [r] always reject.

When stdin is not a terminal, chat runs it as a script: each line is a prompt
(one turn), a line starting with / is a slash command, # starts a comment,
and a <<EOF ... EOF block sends the lines between as one prompt. Output is
plain text (each answer, a blank line between turns), or with --json the
NDJSON of 'openheim prompt --json' for every turn. The exit code is that of
the first failing turn (or slash command); --keep-going runs the rest anyway.
Permission asks follow prompt's rule: allowed, unless --deny-ask.

Examples:
  openheim chat
  openheim chat --continue
  openheim chat --session 5d0c --model anthropic/claude-sonnet-4-5
  openheim chat < scripts/examples/review.chat
  openheim chat --json --keep-going < checks.chat > run.ndjson`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "session", Aliases: []string{"s"}, Usage: "resume the session `ID` (or a unique id prefix, or its exact title)"},
			&cli.BoolFlag{Name: "continue", Aliases: []string{"c"}, Usage: "resume the latest session in the work directory"},
			&cli.StringFlag{Name: "model", Aliases: []string{"m"}, Usage: "model to use, as `provider/model` or a model name"},
			&cli.StringSliceFlag{Name: "skills", Usage: "activate these skills (`a,b`) for the session"},
			&cli.BoolFlag{Name: "allow-shell", Usage: "offer the execute_command tool"},
			&cli.StringFlag{Name: "work-dir", Aliases: []string{"C"}, Usage: "work directory the tools are confined to (default: work_dir, else cwd)"},
			&cli.BoolFlag{Name: "json", Usage: "script mode: print NDJSON events (the schema of prompt --json) instead of plain text"},
			&cli.BoolFlag{Name: "keep-going", Aliases: []string{"k"}, Usage: "script mode: run the rest of the script after a failing turn"},
			&cli.BoolFlag{Name: "deny-ask", Usage: "script mode: deny tool calls the permission rules say to ask about (by default they run)"},
			&cli.StringFlag{Name: "agent", Aliases: []string{"a"}, Usage: "let the external ACP agent `NAME` run the turns ('openheim acp agents' lists them)"},
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if err := noArgs(cmd); err != nil {
				return usageErr(err, "type prompts after starting chat, or pipe a script into it")
			}
			if cmd.Bool("continue") && cmd.String("session") != "" {
				return usageErr(errors.New("chat: --session and --continue are mutually exclusive"), "")
			}
			return chatRun(ctx, &ChatOptions{IO: ios, ConfigPath: cmd.Root().String("config"), Version: version,
				SessionID: cmd.String("session"), Continue: cmd.Bool("continue"), Model: cmd.String("model"),
				Skills: skillsFlag(cmd), AllowShell: cmd.Bool("allow-shell"), WorkDir: cmd.String("work-dir"),
				JSON: cmd.Bool("json"), KeepGoing: cmd.Bool("keep-going"), DenyAsk: cmd.Bool("deny-ask"), Agent: cmd.String("agent")})
		},
	}
}

func chatRun(ctx context.Context, opts *ChatOptions) error {
	ios := opts.IO
	interactive := ios.InTTY && !opts.JSON
	cfg, err := turnConfig(opts.ConfigPath, opts.WorkDir, opts.AllowShell, ios)
	if err != nil {
		return err
	}
	env, err := openSessions(ios)
	if err != nil {
		return err
	}
	c := &chat{ios: ios, cfg: cfg, env: env, version: opts.Version, skills: opts.Skills,
		thinking: true, denyAsk: opts.DenyAsk, out: ios.Out}
	if opts.JSON {
		c.out = ios.ErrOut // stdout carries NDJSON only
	}
	if opts.Model != "" {
		if err := c.setModel(opts.Model); err != nil {
			return usageErr(fmt.Errorf("chat: --model: %w", err), "see the providers' models in your config")
		}
	}
	if err := c.openInitial(opts); err != nil {
		return err
	}
	// Without a usable model (or agent) no turn can run: say so now, not
	// after the first prompt was typed.
	if opts.Agent != "" {
		if _, err := cfg.ACPAgentNamed(opts.Agent); err != nil {
			return usageErr(fmt.Errorf("chat: --agent: %w", err), "see 'openheim acp agents'")
		}
	} else if _, err := cfg.Resolve(c.provider, c.model); err != nil {
		return usageErr(fmt.Errorf("chat: %w", err), "")
	}

	var r *repl
	if interactive {
		if r, err = c.newREPL(); err != nil {
			return err
		}
	}
	var servers *mcp.Manager
	if opts.Agent == "" { // an external agent gets the servers passed on instead
		servers = startMCP(ctx, cfg, c.ios, opts.Version)
	}
	if servers != nil {
		defer servers.Close()
	}
	c.servers = servers
	c.eng = withMCP(newEngine(cfg, env), servers)
	defer withMemory(c.eng, cfg, c.ios)()
	var closeRunner func()
	c.runner, closeRunner = turnRunner(c.eng, opts.Agent)
	defer closeRunner()

	if r != nil {
		return r.run(ctx)
	}
	return c.script(ctx, ios.In, opts)
}

// openInitial resumes the session --session or --continue names, if any.
func (c *chat) openInitial(opts *ChatOptions) error {
	id, err := resolveSession(c.env, "chat", opts.SessionID, opts.Continue, false, c.cfg.WorkDir)
	if err != nil || id == "" {
		return err
	}
	return c.resume(id)
}
