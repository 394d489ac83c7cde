package commands

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/openheim/openheim/protocol/acp/host"
	"github.com/openheim/openheim/runtime/config"
	"github.com/urfave/cli/v3"
)

// ACPSessionsOptions is everything `openheim acp sessions ls|close|rm` and
// `openheim acp logout` need: an external agent's own sessions and login.
type ACPSessionsOptions struct {
	IO       *IOStreams
	Config   func() (*config.Config, error)
	Sessions func() (*Sessions, error)
	Runtime  func(ctx context.Context, cfg *config.Config, s *Sessions, withMCP bool) (*Runtime, func())
	Verb     string // ls, close, rm or logout
	Agent    string
	IDs      []string // the agent's session ids (close, rm)
	Cwd      string   // ls: only sessions in this directory
	Output   jsonOutput
}

// acpSessionJSON is one line of `acp sessions ls --json`.
type acpSessionJSON struct {
	SessionID string `json:"sessionId"`
	Cwd       string `json:"cwd"`
	Title     string `json:"title,omitempty"`
	UpdatedAt string `json:"updatedAt,omitempty"`
	// Openheim is the openheim session bound to it, if any.
	Openheim string `json:"openheim_session,omitempty"`
}

func newCmdACPSessions(f *Factory, runF func(context.Context, *ACPSessionsOptions) error) *cli.Command {
	verb := func(name, usage, args, desc string, flags []cli.Flag, minArgs int) *cli.Command {
		opts := &ACPSessionsOptions{IO: f.IOStreams, Config: f.Config, Sessions: f.Sessions, Runtime: f.Runtime, Verb: name}
		return &cli.Command{Name: name, Usage: usage, ArgsUsage: args, Description: desc, Flags: flags,
			Action: func(ctx context.Context, cmd *cli.Command) error {
				if cmd.Args().Len() < minArgs {
					return usageErr(fmt.Errorf("acp sessions %s: give %s", name, args), "'openheim acp agents' lists the agents")
				}
				opts.Agent, opts.IDs = cmd.Args().First(), cmd.Args().Tail()
				opts.Output = jsonOutputOf(cmd)
				if dir := cmd.String("cwd"); dir != "" {
					abs, err := filepath.Abs(dir)
					if err != nil {
						return usageErr(err, "")
					}
					opts.Cwd = abs
				}
				return run(ctx, opts, runF, acpSessionsRun)
			}}
	}
	return &cli.Command{
		Name:  "sessions",
		Usage: "list, close and delete an external agent's own sessions",
		Description: `An ACP agent keeps sessions of its own (session/list, close, delete); the
openheim sessions it ran are bound to one each ('openheim sessions ls' shows
the agent). These commands reach the agent's side: where the agent does not
offer a call, they say so.

Examples:
  openheim acp sessions ls claude-agent-acp
  openheim acp sessions ls codex-acp --cwd . --json
  openheim acp sessions close claude-agent-acp 0e6f...
  openheim acp sessions rm claude-agent-acp 0e6f...`,
		Commands: []*cli.Command{
			verb("ls", "list the agent's sessions (session/list)", "AGENT", "", append([]cli.Flag{
				&cli.StringFlag{Name: "cwd", Usage: "only sessions whose directory is `DIR`"},
			}, jsonFlags()...), 1),
			verb("close", "end sessions the agent keeps running (session/close)", "AGENT ID...", "", nil, 2),
			verb("rm", "delete sessions from the agent's storage (session/delete)", "AGENT ID...",
				"The openheim sessions bound to them stay; 'openheim sessions rm' removes both.", nil, 2),
		},
	}
}

func newCmdACPLogout(f *Factory, runF func(context.Context, *ACPSessionsOptions) error) *cli.Command {
	opts := &ACPSessionsOptions{IO: f.IOStreams, Config: f.Config, Sessions: f.Sessions, Runtime: f.Runtime, Verb: "logout"}
	return &cli.Command{
		Name:      "logout",
		Usage:     "make an external agent forget its credentials (ACP logout)",
		ArgsUsage: "AGENT",
		Description: `Asks the agent to log out, where it offers that (agentCapabilities.auth.logout).
Logging in is the agent's own business ('openheim acp agents --probe' shows
its methods); an env_var method is used by itself when [acp_agents.X].env
sets its variables.

Examples:
  openheim acp logout codex-acp`,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() != 1 {
				return usageErr(errors.New("acp logout: give one agent"), "'openheim acp agents' lists them")
			}
			opts.Agent = cmd.Args().First()
			return run(ctx, opts, runF, acpSessionsRun)
		},
	}
}

func acpSessionsRun(ctx context.Context, opts *ACPSessionsOptions) error {
	what := "acp sessions " + opts.Verb
	if opts.Verb == "logout" {
		what = "acp logout"
	}
	s, err := opts.Sessions()
	if err != nil {
		return err
	}
	agents := &agentRunners{config: opts.Config, runtime: opts.Runtime, sess: s}
	defer agents.close()
	r, err := agents.get(ctx, opts.Agent)
	if err != nil {
		return usageErr(fmt.Errorf("%s: %w", what, err), "'openheim acp agents' lists the agents")
	}
	switch opts.Verb {
	case "ls":
		err = listAgentSessions(ctx, opts, s, r)
	case "logout":
		if err = r.Logout(ctx); err == nil {
			fmt.Fprintf(opts.IO.Out, "logged out of %s\n", opts.Agent)
		}
	default:
		for _, id := range opts.IDs {
			if opts.Verb == "close" {
				err = r.CloseAgentSession(ctx, id)
			} else {
				err = r.DeleteAgentSession(ctx, id)
			}
			if err != nil {
				break
			}
			fmt.Fprintf(opts.IO.Out, "%s %s\n", map[string]string{"close": "closed", "rm": "deleted"}[opts.Verb], id)
		}
	}
	if err != nil {
		return agentCallError(what, err)
	}
	return nil
}

// agentCallError maps an agent's refusal: a call it does not offer is the
// user's mistake (exit 2), anything else a failure.
func agentCallError(what string, err error) error {
	var unsupported *host.UnsupportedError
	switch {
	case host.IsAuthRequired(err):
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("%s: %w", what, err), Hint: "log the agent in, then retry"}
	case errors.As(err, &unsupported):
		return usageErr(fmt.Errorf("%s: %w", what, err), "")
	}
	return failure(fmt.Errorf("%s: %w", what, err))
}

func listAgentSessions(ctx context.Context, opts *ACPSessionsOptions, s *Sessions, r *host.Runner) error {
	list, err := r.AgentSessions(ctx, opts.Cwd)
	if err != nil {
		return err
	}
	bound := map[string]string{} // agent session -> openheim session
	if all, err := s.Files.List(); err == nil {
		for _, m := range all {
			if m.ACP != nil && m.ACP.Agent == opts.Agent && m.ACP.SessionID != "" {
				bound[m.ACP.SessionID] = m.ID
			}
		}
	}
	var rows []acpSessionJSON
	for _, in := range list {
		rows = append(rows, acpSessionJSON{SessionID: in.SessionID, Cwd: in.CWD, Title: deref(in.Title),
			UpdatedAt: deref(in.UpdatedAt), Openheim: bound[in.SessionID]})
	}
	if opts.Output.machine() {
		for _, row := range rows {
			if err := opts.Output.print(opts.IO, row); err != nil {
				return err
			}
		}
		return nil
	}
	if len(rows) == 0 {
		fmt.Fprintf(opts.IO.ErrOut, "%s lists no sessions\n", opts.Agent)
		return nil
	}
	tw := newTable(opts.IO.Out)
	fmt.Fprintln(tw, "SESSION\tUPDATED\tOPENHEIM\tCWD\tTITLE")
	for _, row := range rows {
		oh := "-"
		if row.Openheim != "" {
			oh = row.Openheim[:8]
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", row.SessionID, orDash(row.UpdatedAt), oh, row.Cwd, oneLine(row.Title, 50))
	}
	return tw.Flush()
}
