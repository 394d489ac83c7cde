package commands

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/urfave/cli/v3"
)

// Usage errors read the same at every level: the command's path (without
// "openheim", which PrintError puts first), what was wrong in words a user
// knows (no Go parser internals), a "did you mean" when a name was close,
// and a hint naming the command's own --help. Each exits 2.

// cmdPath is cmd's path below the root: "sessions ls", "" for the root.
func cmdPath(cmd *cli.Command) string {
	return strings.TrimPrefix(strings.TrimPrefix(cmd.FullName(), cmd.Root().Name), " ")
}

// helpHint is "see 'openheim sessions ls --help'" for cmd.
func helpHint(cmd *cli.Command) string {
	return fmt.Sprintf("see '%s --help'", cmd.FullName())
}

// withPath prefixes msg with cmd's path, unless cmd is the root.
func withPath(cmd *cli.Command, msg string) error {
	if p := cmdPath(cmd); p != "" {
		return fmt.Errorf("%s: %s", p, msg)
	}
	return fmt.Errorf("%s", msg)
}

var (
	undefinedFlagRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^flag provided but not defined: -+(\S+)$`) })
	missingValueRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^flag needs an argument: -*(\S+)$`) })
	badValueRE      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^invalid value "(.*)" for flag -+(\S+): (.*)$`) })
)

func onUsageError(_ context.Context, cmd *cli.Command, err error, _ bool) error {
	msg, hint := explainUsage(cmd, err.Error())
	if hint == "" {
		hint = helpHint(cmd)
	}
	return usageErr(withPath(cmd, msg), hint)
}

// explainUsage words a flag parsing error of cmd, and a suggestion when one
// fits.
func explainUsage(cmd *cli.Command, msg string) (string, string) {
	if m := undefinedFlagRE().FindStringSubmatch(msg); m != nil {
		name := m[1]
		if near := nearest(name, flagNames(cmd)); near != "" {
			return "unknown flag " + dashed(name), fmt.Sprintf("did you mean %s? %s", dashed(near), helpHint(cmd))
		}
		return "unknown flag " + dashed(name), ""
	}
	if m := missingValueRE().FindStringSubmatch(msg); m != nil {
		return dashed(m[1]) + " needs a value", ""
	}
	if m := badValueRE().FindStringSubmatch(msg); m != nil {
		if !parseFailure(m[3]) { // the flag's own check said why
			return fmt.Sprintf("%s: %s", dashed(m[2]), m[3]), ""
		}
		return fmt.Sprintf("%s: %q is not %s", dashed(m[2]), m[1], valueKind(cmd, m[2], m[3])), ""
	}
	return msg, ""
}

// parseFailure tells a value Go could not parse from one a flag's
// validator refused.
func parseFailure(why string) bool {
	for _, s := range []string{"strconv.", "invalid syntax", "out of range", "time: "} {
		if strings.Contains(why, s) {
			return true
		}
	}
	return false
}

// dashed writes a flag name as it is typed: -m, --model.
func dashed(name string) string {
	if len([]rune(name)) == 1 {
		return "-" + name
	}
	return "--" + name
}

// valueKind says what a flag of that name takes, for "is not ...".
func valueKind(cmd *cli.Command, name, why string) string {
	for _, f := range cmd.Flags {
		for _, n := range f.Names() {
			if n != name {
				continue
			}
			switch f.(type) {
			case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag:
				return "a whole number"
			case *cli.FloatFlag:
				return "a number"
			case *cli.DurationFlag:
				return "a duration such as 90s, 5m or 1h30m"
			case *cli.BoolFlag:
				return "true or false"
			}
		}
	}
	// Strip a Go parser's name ("strconv.ParseInt: parsing ...: ").
	if i := strings.LastIndex(why, ": "); i >= 0 {
		why = why[i+2:]
	}
	return "valid: " + why
}

func flagNames(cmd *cli.Command) []string {
	var out []string
	for _, f := range cmd.Flags {
		for _, n := range f.Names() {
			if len(n) > 1 {
				out = append(out, n)
			}
		}
	}
	return out
}

// commandNames are the names and aliases of cmd's visible subcommands.
func commandNames(cmd *cli.Command) []string {
	var out []string
	for _, c := range cmd.VisibleCommands() {
		out = append(out, c.Names()...)
	}
	return out
}

// nearest is the candidate name was most likely meant to be: one it is a
// prefix of, else the closest by edit distance (one edit per three
// letters, at least one, at most two); "" when none is close.
func nearest(name string, candidates []string) string {
	best, bestD := "", min(max(1, len(name)/3), 2)+1
	for _, c := range candidates {
		if c == name {
			return c
		}
	}
	for _, c := range candidates {
		if name != "" && strings.HasPrefix(c, name) {
			return c
		}
		if d := editDistance(name, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// unknownCommand is the usage error for a subcommand of parent that does
// not exist, with the nearest one suggested.
func unknownCommand(parent *cli.Command, name string) error {
	hint := helpHint(parent) + " for the commands"
	if near := nearest(name, commandNames(parent)); near != "" {
		hint = fmt.Sprintf("did you mean '%s %s'? %s", parent.FullName(), near, hint)
	}
	return usageErr(withPath(parent, fmt.Sprintf("unknown command %q", name)), hint)
}

// groupAction is the action of a command that only holds subcommands: its
// help with no argument, a usage error (with a suggestion) for a name
// that is not one of them.
func groupAction(_ context.Context, cmd *cli.Command) error {
	if cmd.Args().Len() > 0 {
		return unknownCommand(cmd, cmd.Args().First())
	}
	return cli.ShowSubcommandHelp(cmd)
}

// noArgs rejects stray positional arguments; for a command that has
// subcommands too (acp), a mistyped one.
func noArgs(cmd *cli.Command) error {
	if cmd.Args().Len() > 0 && len(cmd.VisibleCommands()) > 0 {
		return unknownCommand(cmd, cmd.Args().First())
	}
	if cmd.Args().Len() > 0 {
		return usageErr(withPath(cmd, fmt.Sprintf("unexpected argument %q", cmd.Args().First())), helpHint(cmd))
	}
	return nil
}

// limitFlag is a --limit of at least least (0 meaning all, where
// allowed).
func limitFlag(value, least int, usage string) *cli.IntFlag {
	return &cli.IntFlag{Name: "limit", Value: value, Usage: usage, Validator: func(n int) error {
		if n < least {
			return fmt.Errorf("must be %d or more (got %d)", least, n)
		}
		return nil
	}}
}
