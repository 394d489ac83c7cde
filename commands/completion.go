package commands

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/session"
	"github.com/openheim/openheim/runtime/skills"
	"github.com/urfave/cli/v3"
)

// Shell completion is urfave/cli's: `openheim completion bash|zsh|fish`
// prints a script that calls openheim back with --generate-shell-completion
// for the words typed so far; each command answers with one candidate per
// line, "token:description". The values of flags and arguments that name
// something openheim knows (sessions, models, providers, skills, agents,
// MCP servers) are completed from the config and the data directory.

// completer lists candidates: token and description.
type completer func(f *Factory) [][2]string

// flagValues maps a flag (every name of it) to what completes its value.
var flagValues = map[string]completer{
	"session": sessionCandidates, "s": sessionCandidates,
	"model": modelCandidates, "m": modelCandidates,
	"provider": providerCandidates, "p": providerCandidates,
	"skills": skillCandidates, "agent": agentCandidates, "a": agentCandidates,
}

// argCompletions complete the arguments of the commands (by path) whose
// arguments name something.
var argCompletions = map[string]argCompletion{
	"sessions show": {sessionCandidates, false}, "sessions rename": {sessionCandidates, false},
	"sessions fork": {sessionCandidates, false}, "sessions export": {sessionCandidates, false},
	"sessions rm": {sessionCandidates, true}, "skills": {skillCandidates, false}, "acp agents": {agentCandidates, true},
	"mcp ls": {mcpServerCandidates, false}, "mcp tools": {mcpServerCandidates, false},
	"mcp call": {mcpServerCandidates, false}, "mcp rm": {mcpServerCandidates, false},
}

// argCompletion completes a command's first argument, or each with many.
type argCompletion struct {
	values completer
	many   bool
}

// completeWith is a ShellComplete that completes a value flag's value,
// else the command's flags (for a word starting with "-"), else its
// arguments with args (nil: the subcommands).
func completeWith(f *Factory, args argCompletion) cli.ShellCompleteFunc {
	return func(ctx context.Context, cmd *cli.Command) {
		// Completion must print nothing but candidates: a config warning
		// would land in the user's prompt.
		f.IOStreams.ErrOut = io.Discard
		words := cmd.Args().Slice()
		last := ""
		if len(words) > 0 {
			last = words[len(words)-1]
		}
		if strings.HasPrefix(last, "-") {
			name := strings.TrimLeft(last, "-")
			if values := flagValues[name]; values != nil && hasFlag(cmd, name) {
				printCandidates(cmd, values(f))
				return
			}
			cli.DefaultCompleteWithFlags(ctx, cmd)
			return
		}
		switch {
		case args.values == nil:
			cli.DefaultCompleteWithFlags(ctx, cmd)
		case len(words) == 0 || args.many:
			printCandidates(cmd, args.values(f))
		}
	}
}

func hasFlag(cmd *cli.Command, name string) bool {
	for _, fl := range cmd.Flags {
		if slices.Contains(fl.Names(), name) {
			return true
		}
	}
	return false
}

// printCandidates writes one "token:description" line each; a colon in a
// token (ollama/qwen3:8b) is escaped as "\:", which zsh reads natively and
// the bash and fish scripts (patched below) undo.
func printCandidates(cmd *cli.Command, cands [][2]string) {
	w := cmd.Root().Writer
	for _, c := range cands {
		token := strings.ReplaceAll(c[0], ":", `\:`)
		if desc := oneLine(c[1], 60); desc != "" {
			fmt.Fprintf(w, "%s:%s\n", token, desc)
		} else {
			fmt.Fprintln(w, token)
		}
	}
}

// maxSessionCandidates bounds the session ids offered: the most recent.
const maxSessionCandidates = 50

func sessionCandidates(f *Factory) [][2]string {
	s, err := f.Sessions()
	if err != nil {
		return nil
	}
	metas, err := s.Files.List()
	if err != nil {
		return nil
	}
	slices.SortFunc(metas, func(a, b session.Meta) int { return b.UpdatedAt.Compare(a.UpdatedAt) })
	var out [][2]string
	for _, m := range metas[:min(len(metas), maxSessionCandidates)] {
		out = append(out, [2]string{m.ID, deref(m.Title)})
	}
	return out
}

func withConfig(f *Factory, fn func(*config.Config) [][2]string) [][2]string {
	cfg, err := f.Config()
	if err != nil {
		return nil
	}
	return fn(cfg)
}

func modelCandidates(f *Factory) [][2]string {
	return withConfig(f, func(cfg *config.Config) [][2]string {
		var out [][2]string
		for _, ref := range cfg.ModelRefs() {
			out = append(out, [2]string{ref, ""})
		}
		return out
	})
}

func providerCandidates(f *Factory) [][2]string {
	return withConfig(f, func(cfg *config.Config) [][2]string {
		var out [][2]string
		for _, name := range sortedNames(cfg.Providers) {
			out = append(out, [2]string{name, cfg.Providers[name].Kind + ", " + cfg.Providers[name].DefaultModel})
		}
		return out
	})
}

func skillCandidates(f *Factory) [][2]string {
	return withConfig(f, func(cfg *config.Config) [][2]string {
		names, _ := skills.List(cfg.SkillsDir())
		var out [][2]string
		for _, n := range names {
			out = append(out, [2]string{n, ""})
		}
		return out
	})
}

func agentCandidates(f *Factory) [][2]string {
	return withConfig(f, func(cfg *config.Config) [][2]string {
		var out [][2]string
		for _, n := range cfg.ACPAgentNames() {
			out = append(out, [2]string{n, ""})
		}
		return out
	})
}

func mcpServerCandidates(f *Factory) [][2]string {
	return withConfig(f, func(cfg *config.Config) [][2]string {
		var out [][2]string
		for _, n := range sortedNames(cfg.MCPServers) {
			s := cfg.MCPServers[n]
			desc := s.Command // never its arguments: they may hold secrets
			if s.URL != "" {
				desc = "streamable HTTP"
			}
			out = append(out, [2]string{n, desc})
		}
		return out
	})
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// setupCompletion turns urfave's completion command into openheim's:
// listed, documented, bash/zsh/fish, with tokens holding colons.
func setupCompletion(c *cli.Command) {
	c.Hidden = false
	c.Usage = "print a shell completion script (bash, zsh or fish)"
	c.ArgsUsage = "bash|zsh|fish"
	c.Description = `Prints a script that makes the shell complete openheim's commands, flags,
session ids, models, providers, skills, agents and MCP server names. Load it
from the shell's start-up file.

Examples:
  source <(openheim completion bash)                       # in ~/.bashrc
  source <(openheim completion zsh)                        # in ~/.zshrc (after compinit)
  openheim completion fish > ~/.config/fish/completions/openheim.fish`
	c.Action = groupAction
	var keep []*cli.Command
	for _, sub := range c.Commands {
		switch sub.Name {
		case "bash", "fish":
			sub.Action = patchedScript(sub.Action)
		case "pwsh":
			continue
		}
		sub.OnUsageError = onUsageError
		keep = append(keep, sub)
	}
	c.Commands = keep
	c.OnUsageError = onUsageError
}

// scriptFixes undo the "\:" escape of tokens in urfave's bash and fish
// scripts, which split "token:description" at the first colon; bash also
// drops the part of a token before a colon it took as a word break.
var scriptFixes = [][2]string{
	{`      if [[ "${line}" == *:* ]]; then
        token="${line%%:*}"
        description="${line#*:}"
      fi
`, `      line="${line//\\:/$'\x1f'}"
      token="${line}"
      if [[ "${line}" == *:* ]]; then
        token="${line%%:*}"
        description="${line#*:}"
      fi
      token="${token//$'\x1f'/:}"
`},
	{`      COMPREPLY=("${matches[@]}")
`, `      COMPREPLY=("${matches[@]}")
      if declare -F __ltrim_colon_completions >/dev/null 2>&1; then
        __ltrim_colon_completions "${cur}"
      fi
`},
	{`            set -l parts (string split -m 1 ":" -- "$line")
`, `            set -l parts (string replace -a -- '\:' \x1f "$line" | string split -m 1 ":")
            set parts (string replace -a -- \x1f ':' $parts)
`},
}

// patchedScript runs the script subcommand's action into a buffer and
// applies scriptFixes.
func patchedScript(action cli.ActionFunc) cli.ActionFunc {
	return func(ctx context.Context, cmd *cli.Command) error {
		root := cmd.Root()
		out := root.Writer
		var b strings.Builder
		root.Writer = &b
		err := action(ctx, cmd)
		root.Writer = out
		if err != nil {
			return err
		}
		script := b.String()
		for _, fix := range scriptFixes {
			script = strings.Replace(script, fix[0], fix[1], 1)
		}
		_, err = io.WriteString(out, script)
		return err
	}
}
