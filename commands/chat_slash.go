package commands

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/openheim/openheim/runtime/memory"
)

// slashCommand is one /command of chat, in the REPL and in scripts alike.
type slashCommand struct {
	name, args, help string
	// complete lists candidates for the argument (tab completion).
	complete func(c *chat) []string
	run      func(ctx context.Context, c *chat, arg string) error
}

// errQuit ends the chat (/exit).
var errQuit = errors.New("quit")

// slashCommands is filled in init: /help lists the table it is part of.
var slashCommands []slashCommand

func init() {
	slashCommands = []slashCommand{
		{name: "help", help: "list the slash commands", run: cmdHelp},
		{name: "new", help: "start a new session", run: cmdNew},
		{name: "sessions", help: "list recent sessions and pick one to resume", run: cmdSessions},
		{name: "resume", args: "ID", help: "resume a session (id, id prefix or exact title)", run: cmdResume, complete: sessionIDs},
		{name: "fork", help: "continue in a copy of this session (the original stays as it is)", run: cmdFork},
		{name: "rename", args: "TITLE", help: "change this session's title", run: cmdRename},
		{name: "model", args: "[NAME]", help: "show the models, or switch to provider/model or a model name", run: cmdModel, complete: func(c *chat) []string { return c.cfg.ModelRefs() }},
		{name: "skills", args: "[+name|-name]", help: "show the skills, or activate (+) or drop (-) one", run: cmdSkills, complete: skillArgs},
		{name: "mode", args: "code|architect", help: "code runs every tool; architect only reads and plans (an agent's: its modes)", run: cmdMode, complete: func(*chat) []string { return []string{"architect", "code"} }},
		{name: "config", args: "[ID VALUE]", help: "show an external agent's options, or set one", run: cmdConfig},
		{name: "thinking", args: "on|off", help: "show or hide the model's thinking", run: cmdThinking, complete: func(*chat) []string { return []string{"off", "on"} }},
		{name: "tools", help: "list the tools the agent can call", run: cmdTools},
		{name: "mcp", help: "show the MCP servers and whether they are connected", run: cmdMCP},
		{name: "memory", args: "QUERY", help: "search long-term memory", run: cmdMemory},
		{name: "usage", help: "context and tokens of this session", run: cmdUsage},
		{name: "export", args: "FILE", help: "write this session to FILE (.md transcript, .json conversation)", run: cmdExport},
		{name: "clear", help: "clear the screen", run: cmdClear},
		{name: "exit", help: "quit (also Ctrl-D)", run: func(context.Context, *chat, string) error { return errQuit }},
	}
}

// slashErr is a mistake in a slash command: in a script it fails like a
// usage error (exit code 2).
type slashErr struct{ msg string }

func (e *slashErr) Error() string { return e.msg }

func slashErrorf(format string, args ...any) error { return &slashErr{fmt.Sprintf(format, args...)} }

// runSlash runs line ("/name arg...").
func (c *chat) runSlash(ctx context.Context, line string) error {
	name, arg, _ := strings.Cut(strings.TrimSpace(strings.TrimPrefix(line, "/")), " ")
	arg = strings.TrimSpace(arg)
	if name == "quit" {
		name = "exit"
	}
	for _, sc := range slashCommands {
		if sc.name == name {
			return sc.run(ctx, c, arg)
		}
	}
	hint := "/help lists the commands"
	if near := nearestCommand(name); near != "" {
		hint = "did you mean /" + near + "? " + hint
	}
	return slashErrorf("unknown command /%s (%s)", name, hint)
}

// nearestCommand suggests the command name was most likely meant: the one
// it is a prefix of, else the closest by edit distance (at most 2).
func nearestCommand(name string) string {
	best, bestD := "", 3
	for _, sc := range slashCommands {
		if sc.name == name {
			return name
		}
	}
	for _, sc := range slashCommands {
		if name != "" && strings.HasPrefix(sc.name, name) {
			return sc.name
		}
		if d := editDistance(name, sc.name); d < bestD {
			best, bestD = sc.name, d
		}
	}
	return best
}

// editDistance counts the edits between a and b: inserting, deleting or
// replacing a byte, or swapping two adjacent ones ("chta" is one from
// "chat"), as typos go.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

func cmdHelp(ctx context.Context, c *chat, _ string) error {
	tw := newTable(c.out)
	for _, sc := range slashCommands {
		fmt.Fprintf(tw, "  /%s %s\t%s\n", sc.name, sc.args, sc.help)
	}
	tw.Flush()
	c.agentCommands(ctx)
	fmt.Fprintln(c.out, c.style.Dim("  A line ending in \\ continues on the next one. Ctrl-C cancels a turn; twice at an empty prompt, or Ctrl-D, quits."))
	return nil
}

func cmdNew(_ context.Context, c *chat, _ string) error {
	c.newSession()
	fmt.Fprintf(c.out, "new session · %s\n", c.currentModel())
	return nil
}

func cmdModel(ctx context.Context, c *chat, arg string) error {
	if c.agentRunner() != nil {
		return agentModel(ctx, c, arg)
	}
	if arg == "" {
		current := c.currentModel()
		for _, ref := range c.cfg.ModelRefs() {
			mark := "  "
			if ref == current {
				mark = c.style.AccentText("* ")
			}
			fmt.Fprintf(c.out, "%s%s\n", mark, ref)
		}
		return nil
	}
	if err := c.setModel(arg); err != nil {
		return slashErrorf("/model: %v", err)
	}
	fmt.Fprintf(c.out, "model: %s\n", c.currentModel())
	return nil
}

func cmdSkills(_ context.Context, c *chat, arg string) error {
	active := slices.Clone(c.activeSkills())
	available := c.availableSkills()
	if arg == "" {
		if len(available) == 0 {
			fmt.Fprintf(c.out, "no skills in %s\n", c.cfg.SkillsDir())
			return nil
		}
		for _, name := range available {
			mark := "  "
			if slices.Contains(active, name) {
				mark = c.style.AccentText("+ ")
			}
			fmt.Fprintf(c.out, "%s%s\n", mark, name)
		}
		return nil
	}
	for _, f := range strings.Fields(arg) {
		op, name := f[0], f[1:]
		switch {
		case (op != '+' && op != '-') || name == "":
			return slashErrorf("/skills: write +name to activate a skill or -name to drop one, not %q", f)
		case op == '+' && !slices.Contains(available, name):
			return slashErrorf("/skills: no skill %q (available: %s)", name, strings.Join(available, ", "))
		case op == '+' && !slices.Contains(active, name):
			active = append(active, name)
		case op == '-':
			active = slices.DeleteFunc(active, func(s string) bool { return s == name })
		}
	}
	c.skills = active
	fmt.Fprintf(c.out, "skills: %s\n", orNoneList(active))
	return nil
}

func orNoneList(l []string) string {
	if len(l) == 0 {
		return "(none)"
	}
	return strings.Join(l, ", ")
}

func skillArgs(c *chat) []string {
	var out []string
	for _, name := range c.availableSkills() {
		out = append(out, "+"+name, "-"+name)
	}
	return out
}

func cmdMode(ctx context.Context, c *chat, arg string) error {
	if c.agentRunner() != nil {
		return agentMode(ctx, c, arg)
	}
	switch arg {
	case "":
	case "code":
		c.readOnly = false
	case "architect":
		c.readOnly = true
	default:
		return slashErrorf("/mode: unknown mode %q (modes: code, architect)", arg)
	}
	fmt.Fprintf(c.out, "mode: %s\n", c.mode())
	return nil
}

func (c *chat) mode() string {
	if c.readOnly {
		return "architect"
	}
	return "code"
}

func cmdThinking(_ context.Context, c *chat, arg string) error {
	switch arg {
	case "":
	case "on":
		c.thinking = true
	case "off":
		c.thinking = false
	default:
		return slashErrorf("/thinking: say on or off, not %q", arg)
	}
	state := "shown"
	if !c.thinking {
		state = "hidden"
	}
	fmt.Fprintf(c.out, "thinking: %s\n", state)
	return nil
}

func cmdTools(_ context.Context, c *chat, _ string) error {
	reg, err := c.eng.Tools(c.cfg.WorkDir, nil, c.readOnly)
	if err != nil {
		return err
	}
	list := reg.Tools()
	sort.Slice(list, func(i, j int) bool { return list[i].Spec().Name < list[j].Spec().Name })
	tw := newTable(c.out)
	for _, t := range list {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", t.Spec().Name, t.Kind(), oneLine(firstSentence(t.Spec().Description), 70))
	}
	return tw.Flush()
}

func cmdMCP(_ context.Context, c *chat, _ string) error {
	if c.servers == nil {
		fmt.Fprintln(c.out, "no MCP servers configured ('openheim mcp add' adds one)")
		return nil
	}
	tw := newTable(c.out)
	for _, st := range c.servers.Status() {
		state := c.style.OK("connected")
		switch {
		case st.Error != nil:
			state = c.style.Fail("failed: " + *st.Error)
		case !st.Connected:
			state = "connecting"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%d tools\t%s\n", st.Name, st.Transport, st.ToolCount, state)
	}
	return tw.Flush()
}

func cmdMemory(ctx context.Context, c *chat, arg string) error {
	if arg == "" {
		return slashErrorf("/memory needs a query")
	}
	m, err := c.eng.Memory.Open()
	if err != nil {
		return fmt.Errorf("/memory: %w", err)
	}
	hits, notice, err := m.Search(ctx, arg, 0)
	if err != nil {
		return fmt.Errorf("/memory: %w", err)
	}
	if notice != "" {
		fmt.Fprintln(c.out, c.style.Dim(notice))
	}
	if len(hits) == 0 {
		fmt.Fprintln(c.out, "no notes match")
	}
	for _, h := range hits {
		printHit(c, h)
	}
	return nil
}

func printHit(c *chat, h memory.Hit) {
	fmt.Fprintf(c.out, "%s %s\n", c.style.AccentText(fmt.Sprintf("#%d", h.ID)), c.style.Dim(h.UpdatedAt.Local().Format("2006-01-02")))
	fmt.Fprintf(c.out, "  %s\n", strings.ReplaceAll(strings.TrimSpace(h.Content), "\n", "\n  "))
}

func cmdUsage(_ context.Context, c *chat, _ string) error {
	size := c.ctxSize
	if size == 0 {
		if r, err := c.cfg.Resolve(c.provider, c.model); err == nil {
			size = int64(r.Provider.ContextWindow)
		}
	}
	ctxLine := fmt.Sprintf("%s tokens", thousands(c.ctxUsed))
	if size > 0 {
		ctxLine = fmt.Sprintf("%s of %s tokens (%.1f%%)", thousands(c.ctxUsed), thousands(size), 100*float64(c.ctxUsed)/float64(size))
	}
	sid := "(new: starts with the first prompt)"
	if c.sessionID != "" {
		sid = c.sessionID
	}
	u := c.lastUsage
	fmt.Fprintf(c.out, "session     %s\nmodel       %s\ncontext     %s\n", sid, c.currentModel(), ctxLine)
	fmt.Fprintf(c.out, "last call   %s in, %s out, %s cache read, %s cache write\n",
		thousands(u.InputTokens), thousands(u.OutputTokens), thousands(u.CacheReadTokens), thousands(u.CacheCreationTokens))
	fmt.Fprintf(c.out, "this chat   %d turns, %d model calls, %s tokens processed\n", c.turns, c.calls, thousands(c.processed))
	return nil
}

// thousands writes n with comma separators.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func cmdClear(_ context.Context, c *chat, _ string) error {
	if c.ios.OutTTY {
		fmt.Fprint(c.out, "\x1b[H\x1b[2J\x1b[3J")
	}
	return nil
}
