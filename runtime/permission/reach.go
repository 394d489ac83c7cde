package permission

import (
	"context"
	"fmt"
)

// Reach is what a call will touch, as far as its caller can tell (the ACP
// host reads it from an external agent's request: paths in the tool call's
// locations and arguments, a command), and the boundary of the turn it
// belongs to. A gate judges a call that has one by what it touches rather
// than by the kind its maker claimed:
//
//   - a path outside Root is refused unless an allow_outside rule names it
//     (whatever the allow rules say, and before anyone is asked);
//   - a call that runs a command is of kind execute, whatever kind it
//     claims, and is refused unless Shell is on or an allow rule names it.
type Reach struct {
	Root    string   // the turn's work directory
	Shell   bool     // allow_shell: the turn may run commands
	Paths   []string // absolute paths the call names
	Command string   // the command it runs; "" for none
}

// Kind is the kind the call is judged as: execute when it runs a command,
// else the claimed one.
func (x Reach) Kind(claimed string) string {
	if x.Command != "" {
		return kindExecute
	}
	return claimed
}

// judged is the tool name and kind the rules see: for a call that runs a
// command, kind execute, and a call named by the kind it claimed (as an
// external agent's are) is named execute too, so that `allow = ["search"]`
// does not let a command labelled search through.
func (x Reach) judged(tool, claimed string) (string, string) {
	if x.Command == "" {
		return tool, claimed
	}
	if tool == claimed {
		tool = kindExecute
	}
	return tool, kindExecute
}

type reachKey struct{}

// WithReach returns ctx carrying what the call being checked touches. The
// permit functions a turn passes down (the agent loop's, a subagent's, an
// external agent's) share one signature without room for it; the reach
// rides on the call's context to the one gate that judges it.
func WithReach(ctx context.Context, x Reach) context.Context {
	return context.WithValue(ctx, reachKey{}, &x)
}

func reachFrom(ctx context.Context) *Reach {
	x, _ := ctx.Value(reachKey{}).(*Reach)
	return x
}

// DecideReach is Decide for a call whose reach is known, with the reason
// when the reach alone refuses it ("" otherwise).
func (r Rules) DecideReach(tool, kind string, x Reach) (Decision, string) {
	tool, kind = x.judged(tool, kind)
	for _, p := range x.Paths {
		resolved, ok := resolvePath(p)
		switch {
		case !ok:
			return Deny, fmt.Sprintf("%q cannot be judged (not absolute, a NUL byte or a symlink loop)", p)
		case x.Root != "" && Within(x.Root, p):
		case r.outsideAllowed(resolved):
		default:
			return Deny, fmt.Sprintf("%s is outside the work directory %s (permissions.allow_outside can allow it)", shown(p, resolved), x.Root)
		}
	}
	d := r.Decide(tool, kind)
	if x.Command != "" && !x.Shell && d != Deny && !matchAny(r.Allow, tool) {
		return Deny, fmt.Sprintf("it runs a command (%s) and allow_shell is off (set allow_shell, or allow %q in [permissions])", clip(x.Command), tool)
	}
	return d, ""
}

func shown(p, resolved string) string {
	if p == resolved {
		return p
	}
	return fmt.Sprintf("%s (%s)", p, resolved)
}

func clip(s string) string {
	const max = 80
	if r := []rune(s); len(r) > max {
		return string(r[:max]) + "…"
	}
	return s
}
