package commands

import (
	"context"
	"errors"
	"fmt"

	"github.com/openheim/openheim/runtime/config"
	"github.com/urfave/cli/v3"
)

// ChatOptions is everything `openheim chat` needs.
type ChatOptions struct {
	IO         *IOStreams
	Config     func() (*config.Config, error)
	Sessions   func() (*Sessions, error)
	Runtime    func(ctx context.Context, cfg *config.Config, s *Sessions, withMCP bool) (*Runtime, func())
	Home       func() string // where the REPL keeps its input history
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

func newCmdChat(f *Factory, runF func(context.Context, *ChatOptions) error) *cli.Command {
	opts := &ChatOptions{IO: f.IOStreams, Config: f.Config, Sessions: f.Sessions, Runtime: f.Runtime,
		Home: f.Home, Version: f.Version}
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
			opts.SessionID, opts.Continue, opts.Model = cmd.String("session"), cmd.Bool("continue"), cmd.String("model")
			opts.Skills, opts.AllowShell, opts.WorkDir = skillsFlag(cmd), cmd.Bool("allow-shell"), cmd.String("work-dir")
			opts.JSON, opts.KeepGoing, opts.DenyAsk = cmd.Bool("json"), cmd.Bool("keep-going"), cmd.Bool("deny-ask")
			opts.Agent = cmd.String("agent")
			return run(ctx, opts, runF, chatRun)
		},
	}
}

func chatRun(ctx context.Context, opts *ChatOptions) error {
	c, err := newChat(opts)
	if err != nil {
		return err
	}
	var r *repl
	if opts.IO.InTTY && !opts.JSON {
		if r, err = c.newREPL(); err != nil {
			return err
		}
	}
	// An external agent gets the MCP servers passed on instead.
	rt, release := opts.Runtime(ctx, c.cfg, c.sess, c.agent == "")
	defer release()
	c.eng, c.servers = rt.Engine, rt.Servers
	agent := c.agent
	c.agent = ""
	c.useAgent(agent)
	defer c.closeRunner()
	if r := c.agentRunner(); r != nil {
		r.Initial.Model = c.agentModel
	}

	if r != nil {
		return r.run(ctx)
	}
	return c.script(ctx, opts.IO.In, opts)
}

// newChat loads what a chat starts from: the config with the flags
// applied, the session to resume, and a model (or agent) that can run.
func newChat(opts *ChatOptions) (*chat, error) {
	ios := opts.IO
	cfg, err := turnConfig(opts.Config, opts.WorkDir, opts.AllowShell)
	if err != nil {
		return nil, err
	}
	sess, err := opts.Sessions()
	if err != nil {
		return nil, err
	}
	c := &chat{ios: ios, cfg: cfg, sess: sess, home: opts.Home(), version: opts.Version, skills: opts.Skills,
		thinking: true, denyAsk: opts.DenyAsk, out: ios.Out}
	if opts.JSON {
		c.out = ios.ErrOut // stdout carries NDJSON only
	}
	if err := checkAgent(cfg, "chat", opts.Agent); err != nil {
		return nil, err
	}
	if err := c.openInitial(opts); err != nil {
		return nil, err
	}
	if opts.Model != "" && c.agent != "" {
		c.agentModel = opts.Model // the agent checks it
	} else if opts.Model != "" {
		if err := c.setModel(opts.Model); err != nil {
			return nil, usageErr(fmt.Errorf("chat: --model: %w", err), "see the providers' models in your config")
		}
	}
	// Without a usable model (or agent) no turn can run: say so now, not
	// after the first prompt was typed.
	if c.agent != "" {
		if _, err := cfg.ACPAgentNamed(c.agent); err != nil {
			return nil, usageErr(fmt.Errorf("chat: --agent: %w", err), "see 'openheim acp agents'")
		}
	} else if _, err := cfg.Resolve(c.provider, c.model); err != nil {
		return nil, usageErr(fmt.Errorf("chat: %w", err), "")
	}
	return c, nil
}

// openInitial resumes the session --session or --continue names, if any,
// on the agent that ran it (--agent must agree).
func (c *chat) openInitial(opts *ChatOptions) error {
	id, err := findSession(c.sess, "chat", opts.SessionID, opts.Continue, opts.Agent, c.cfg.WorkDir)
	if err != nil {
		return err
	}
	agent, err := sessionAgent(c.sess, "chat", id, opts.Agent)
	if err != nil || id == "" {
		c.agent = agent
		return err
	}
	return c.resume(id)
}
