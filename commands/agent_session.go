package commands

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/openheim/openheim/protocol/acp/host"
	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/history"
	"github.com/openheim/openheim/runtime/session"
)

// What prompt, chat and sessions share about sessions run by external ACP
// agents: a stored session remembers its agent (session.Meta.ACP), so it
// is continued, forked and removed on that agent without --agent.

// acpProvider is the provider name of a session an ACP agent runs; its
// model is then the agent's name (host.Runner stores them so).
const acpProvider = "acp"

// agentOf is the agent that ran a listed session ("" for openheim's own).
func agentOf(s history.Session) string {
	if s.Provider == acpProvider {
		return s.Model
	}
	return ""
}

// sessionAgent reconciles --agent (flag) with the session id continues:
// a session run by an agent continues on it without --agent; one run by
// another agent, or by openheim itself, is refused with --agent.
func sessionAgent(s *Sessions, cmd, id, flag string) (string, error) {
	if id == "" {
		return flag, nil
	}
	m, err := s.Store.LoadMeta(id)
	if err != nil {
		return "", failure(fmt.Errorf("%s: %w", cmd, err))
	}
	bound := ""
	if m.ACP != nil {
		bound = m.ACP.Agent
	}
	switch {
	case flag == "" || flag == bound:
		return bound, nil
	case bound == "":
		return "", usageErr(fmt.Errorf("%s: session %s was not run by an ACP agent, so --agent %s cannot continue it", cmd, id, flag),
			"drop --agent to continue it, or start a new session with --agent")
	}
	return "", usageErr(fmt.Errorf("%s: session %s was run by ACP agent %s, not %s", cmd, id, bound, flag),
		"drop --agent: a session continues on its own agent")
}

// latestOfAgent is the newest session in workDir run by agent (--continue
// with --agent).
func latestOfAgent(s *Sessions, cmd, agent, workDir string) (string, error) {
	all, err := s.Files.List()
	if err != nil {
		return "", failure(err)
	}
	slices.SortStableFunc(all, func(a, b session.Meta) int { return b.UpdatedAt.Compare(a.UpdatedAt) })
	for _, m := range all {
		if m.ACP != nil && m.ACP.Agent == agent && deref(m.Cwd) == workDir {
			return m.ID, nil
		}
	}
	return "", usageErr(fmt.Errorf("%s: --continue: no earlier session of ACP agent %s in %s", cmd, agent, workDir), "start one without --continue")
}

// findSession turns --session (id, prefix or title) or --continue into a
// session id ("" starts a new one); with agent, --continue takes that
// agent's latest session.
func findSession(s *Sessions, cmd, ref string, cont bool, agent, workDir string) (string, error) {
	if cont && ref == "" && agent != "" {
		return latestOfAgent(s, cmd, agent, workDir)
	}
	return resolveSession(s, cmd, ref, cont, false, workDir)
}

// hostRunner is runner's ACP host Runner, nil for the engine.
func hostRunner(runner engine.Runner) *host.Runner {
	r, _ := runner.(*host.Runner)
	return r
}

// forkSession forks session id for cmd: on its agent when runner is one
// (session/fork, refused with a clear error where the agent lacks it,
// leaving nothing behind), else openheim's own copy.
func forkSession(ctx context.Context, runner engine.Runner, s *Sessions, cmd, id string) (string, error) {
	if hr := hostRunner(runner); hr != nil {
		m, err := hr.Fork(ctx, id)
		var ue *engine.UsageError
		switch {
		case errors.As(err, &ue):
			return "", usageErr(fmt.Errorf("%s: --fork: %w", cmd, err), "")
		case err != nil:
			return "", failure(fmt.Errorf("%s: --fork: %w", cmd, err))
		}
		return m.ID, nil
	}
	forked, err := session.Fork(s.Store, id, -1, time.Now())
	if err != nil {
		return "", failure(fmt.Errorf("%s: --fork: %w", cmd, err))
	}
	return forked.ID, nil
}

// promptMode checks --mode and --provider against who runs the turn: the
// engine's modes are code and architect (architect offers only the tools
// that change nothing); an agent's are its own (the agent checks), and an
// agent has no provider.
func promptMode(opts *PromptOptions, agent string) (engine.ToolFilter, error) {
	if agent != "" {
		if opts.Provider != "" {
			return engine.ToolFilter{}, usageErr(fmt.Errorf("prompt: --provider does not apply to ACP agent %s", agent),
				"--model picks one of the agent's models")
		}
		return engine.ToolFilter{}, nil
	}
	switch opts.Mode {
	case "", "code":
		return engine.ToolFilter{}, nil
	case "architect":
		return engine.ToolFilter{ReadOnly: true}, nil
	}
	return engine.ToolFilter{}, usageErr(fmt.Errorf("prompt: --mode %q: openheim's modes are code and architect", opts.Mode),
		"an agent's own modes apply with --agent")
}

// checkAgent refuses an --agent that names no agent, before anything else.
func checkAgent(cfg *config.Config, cmd, name string) error {
	if name == "" {
		return nil
	}
	if _, err := cfg.ACPAgentNamed(name); err != nil {
		return usageErr(fmt.Errorf("%s: --agent: %w", cmd, err), "see 'openheim acp agents'")
	}
	return nil
}
