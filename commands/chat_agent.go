package commands

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/openheim/openheim/protocol/acp/host"
)

// chat with an external ACP agent (--agent, or a session an agent ran):
// /mode, /model and /config drive the agent's modes, model selector and
// config options; its own commands are listed in /help and run as
// prompts ("/name input", as ACP says).

// useAgent makes name ("" the engine) run the next turns, stopping the
// agent that ran them before. Before the runtime exists (newChat) it only
// records the choice.
func (c *chat) useAgent(name string) {
	if c.eng == nil {
		c.agent = name
		return
	}
	if c.runner != nil && name == c.agent {
		return
	}
	c.closeRunner()
	c.agent = name
	c.runner, c.stopRunner = turnRunner(c.eng, name)
}

// closeRunner stops the agent running the turns, if any.
func (c *chat) closeRunner() {
	if c.stopRunner != nil {
		c.stopRunner()
		c.stopRunner = nil
	}
}

// agentRunner is the Runner of the chat's agent, nil without one.
func (c *chat) agentRunner() *host.Runner { return hostRunner(c.runner) }

// agentMetadata is what the agent offers in the current session; ok is
// false before the agent started it.
func (c *chat) agentMetadata(ctx context.Context) (host.SessionMetadata, bool, error) {
	r := c.agentRunner()
	if r == nil || c.sessionID == "" {
		return host.SessionMetadata{}, false, nil
	}
	return r.Metadata(ctx, c.sessionID)
}

// beforeFirstTurn says a setting waits for the agent's session.
func (c *chat) beforeFirstTurn(what string) {
	fmt.Fprintf(c.out, "%s: asked of %s's session when it starts (the agent's choices are listed after the first prompt)\n", what, c.agent)
}

func agentMode(ctx context.Context, c *chat, arg string) error {
	r := c.agentRunner()
	if arg != "" {
		if err := r.SetMode(ctx, c.sessionID, arg); err != nil {
			return slashErrorf("/mode: %v", err)
		}
	}
	md, ok, err := c.agentMetadata(ctx)
	switch {
	case err != nil:
		return fmt.Errorf("/mode: %w", err)
	case !ok:
		c.beforeFirstTurn("mode " + arg)
		return nil
	case arg != "":
		fmt.Fprintf(c.out, "mode: %s\n", md.CurrentModeID)
		return nil
	}
	if len(md.Modes) == 0 {
		fmt.Fprintf(c.out, "%s offers no modes\n", c.agent)
		return nil
	}
	tw := newTable(c.out)
	for _, m := range md.Modes {
		fmt.Fprintf(tw, "%s%s\t%s\n", c.mark(m.ID == md.CurrentModeID), m.ID, oneLine(m.Description, 70))
	}
	return tw.Flush()
}

func (c *chat) mark(current bool) string {
	if current {
		return c.style.AccentText("* ")
	}
	return "  "
}

func agentModel(ctx context.Context, c *chat, arg string) error {
	r := c.agentRunner()
	if arg != "" {
		if err := r.SetModel(ctx, c.sessionID, arg); err != nil {
			return slashErrorf("/model: %v", err)
		}
	}
	md, ok, err := c.agentMetadata(ctx)
	switch {
	case err != nil:
		return fmt.Errorf("/model: %w", err)
	case !ok:
		c.beforeFirstTurn("model " + arg)
		return nil
	}
	current, choices := md.CurrentModelID, []host.ConfigChoice{}
	for _, m := range md.Models {
		choices = append(choices, host.ConfigChoice{Value: m.ID, Name: m.Name, Description: m.Description})
	}
	if i := slices.IndexFunc(md.ConfigOptions, func(o host.ConfigOption) bool { return o.Category == "model" }); i >= 0 {
		current, choices = fmt.Sprint(md.ConfigOptions[i].Value), md.ConfigOptions[i].Choices
	}
	if arg != "" {
		fmt.Fprintf(c.out, "model: %s\n", current)
		return nil
	}
	if len(choices) == 0 {
		fmt.Fprintf(c.out, "%s offers no model selector\n", c.agent)
		return nil
	}
	tw := newTable(c.out)
	for _, ch := range choices {
		fmt.Fprintf(tw, "%s%s\t%s\n", c.mark(ch.Value == current), ch.Value, oneLine(ch.Description, 70))
	}
	return tw.Flush()
}

// cmdConfig shows the agent's config options, or sets one: /config ID VALUE.
func cmdConfig(ctx context.Context, c *chat, arg string) error {
	r := c.agentRunner()
	if r == nil {
		return slashErrorf("/config sets an external agent's options; openheim's own are /model, /mode, /skills and /thinking")
	}
	if arg != "" {
		id, value, _ := strings.Cut(arg, " ")
		value = strings.TrimSpace(value)
		if value == "" {
			return slashErrorf("/config: give an option and a value: /config ID VALUE")
		}
		if err := r.SetConfigOption(ctx, c.sessionID, id, value); err != nil {
			return slashErrorf("/config: %v", err)
		}
	}
	md, ok, err := c.agentMetadata(ctx)
	switch {
	case err != nil:
		return fmt.Errorf("/config: %w", err)
	case !ok:
		c.beforeFirstTurn("option " + arg)
		return nil
	case len(md.ConfigOptions) == 0:
		fmt.Fprintf(c.out, "%s offers no config options\n", c.agent)
		return nil
	}
	tw := newTable(c.out)
	for _, o := range md.ConfigOptions {
		var vals []string
		for _, ch := range o.Choices {
			vals = append(vals, ch.Value)
		}
		if o.Type == "boolean" {
			vals = []string{"true", "false"}
		}
		fmt.Fprintf(tw, "  %s\t%v\t%s\t%s\n", o.ID, o.Value, o.Name, oneLine(strings.Join(vals, " | "), 60))
	}
	return tw.Flush()
}

// agentCommands lists the agent's own commands in /help.
func (c *chat) agentCommands(ctx context.Context) {
	if c.agentRunner() == nil {
		return
	}
	md, ok, err := c.agentMetadata(ctx)
	if err != nil || !ok || len(md.Commands) == 0 {
		fmt.Fprintln(c.out, c.style.Dim(fmt.Sprintf("  %s's own commands are listed here after the first prompt; //name sends /name to it.", c.agent)))
		return
	}
	fmt.Fprintf(c.out, "%s's commands (sent to it as a prompt; //name for one a command above shadows):\n", c.agent)
	tw := newTable(c.out)
	for _, cmd := range md.Commands {
		args := ""
		if cmd.Hint != "" {
			args = "[" + cmd.Hint + "]"
		}
		fmt.Fprintf(tw, "  /%s %s\t%s\n", cmd.Name, oneLine(args, 30), oneLine(cmd.Description, 70))
	}
	tw.Flush()
}

// isAgentCommand reports whether line ("/name ...") is one of the agent's
// commands and none of chat's own: it is then sent as a prompt.
func (c *chat) isAgentCommand(ctx context.Context, line string) bool {
	name, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "/"), " ")
	if c.agentRunner() == nil || name == "" || name == "quit" ||
		slices.ContainsFunc(slashCommands, func(sc slashCommand) bool { return sc.name == name }) {
		return false
	}
	md, ok, err := c.agentMetadata(ctx)
	return err == nil && ok && slices.ContainsFunc(md.Commands, func(cmd host.Command) bool { return cmd.Name == name })
}
