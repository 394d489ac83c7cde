package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/protocol/acp/host"
	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/redact"
	"github.com/urfave/cli/v3"
)

// probeTimeout bounds starting and initializing one agent for --probe
// (npx may download it first).
const probeTimeout = 2 * time.Minute

// acpAgentJSON is one line of `acp agents --json`.
type acpAgentJSON struct {
	Name      string          `json:"name"`
	Command   string          `json:"command"`
	Args      []string        `json:"args"`
	Preset    string          `json:"preset,omitempty"`
	Probe     *host.Info      `json:"probe,omitempty"`
	ProbeErr  string          `json:"probe_error,omitempty"`
	StartupMs *int64          `json:"startup_ms,omitempty"`
	Raw       json.RawMessage `json:"-"`
}

// ACPAgentsOptions is everything `openheim acp agents` needs.
type ACPAgentsOptions struct {
	IO      *IOStreams
	Config  func() (*config.Config, error)
	Version string   // reported to the agents probed
	Names   []string // nil: every configured agent and preset
	Probe   bool
	Output  jsonOutput
}

func newCmdACPAgents(f *Factory, runF func(context.Context, *ACPAgentsOptions) error) *cli.Command {
	opts := &ACPAgentsOptions{IO: f.IOStreams, Config: f.Config, Version: f.Version}
	return &cli.Command{
		Name:      "agents",
		Usage:     "list the external ACP agents openheim can drive (--probe starts each)",
		ArgsUsage: "[NAME...]",
		Description: `Lists [acp_agents.*] from the config and the presets (claude-agent-acp and
codex-acp through npx, and openheim itself). Use one with
'openheim prompt --agent NAME' or 'openheim chat --agent NAME'.
--probe starts each agent, initializes it and shows what it reports:
its name and version, capabilities and authentication methods.

Names given list only those agents.

Examples:
  openheim acp agents
  openheim acp agents --probe
  openheim acp agents --probe codex-acp
  openheim acp agents --probe --json | jq .probe.agentInfo`,
		Flags: append(jsonFlags(),
			&cli.BoolFlag{Name: "probe", Usage: "start each agent and show its initialize answer"},
		),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			opts.Names, opts.Probe, opts.Output = nil, cmd.Bool("probe"), jsonOutputOf(cmd)
			if cmd.Args().Len() > 0 {
				opts.Names = cmd.Args().Slice()
			}
			return run(ctx, opts, runF, acpAgentsRun)
		},
	}
}

func acpAgentsRun(ctx context.Context, opts *ACPAgentsOptions) error {
	cfg, err := opts.Config()
	if err != nil {
		return err
	}
	names := cfg.ACPAgentNames()
	if opts.Names != nil {
		names = opts.Names
	}
	var rows []acpAgentJSON
	for _, name := range names {
		a, err := cfg.ACPAgentNamed(name)
		if err != nil {
			return usageErr(err, "")
		}
		row := acpAgentJSON{Name: name, Command: a.Command, Args: redactAll(cfg.Redactor(), append(append([]string{}, a.Args...), a.ExtraArgs...)), Preset: a.Preset}
		if opts.Probe {
			probe(ctx, cfg, opts.Version, name, a, &row)
		}
		rows = append(rows, row)
	}
	if opts.Output.machine() {
		for _, r := range rows {
			if err := opts.Output.print(opts.IO, r); err != nil {
				return err
			}
		}
		return nil
	}
	return printACPAgents(opts.IO, rows)
}

// redactAll is args with the config's secrets masked: an agent's command
// line may carry a key, and the listing is output like any other.
func redactAll(red *redact.Redactor, args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = red.String(a)
	}
	return out
}

func printACPAgents(ios *IOStreams, rows []acpAgentJSON) error {
	tw := newTable(ios.Out)
	fmt.Fprintln(tw, "NAME\tCOMMAND\tAGENT\tAUTH")
	for _, r := range rows {
		agent, auth := "", ""
		switch {
		case r.ProbeErr != "":
			agent = "error: " + oneLine(r.ProbeErr, 60)
		case r.Probe != nil:
			agent = describeProbe(r)
			auth = authNames(r.Probe.AuthMethods)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Name, oneLine(strings.Join(append([]string{r.Command}, r.Args...), " "), 50), agent, auth)
	}
	return tw.Flush()
}

// probe starts agent a, records its initialize answer, and stops it.
func probe(ctx context.Context, cfg *config.Config, version, name string, a config.ACPAgent, row *acpAgentJSON) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	start := time.Now()
	// The agent's answers and errors may quote its env or args (keys):
	// they go out through the config's redactor, as everything printed.
	red := cfg.Redactor()
	h, err := host.Start(ctx, host.AgentSpec{Name: name, Command: a.Command, Args: a.Args, ExtraArgs: a.ExtraArgs, Env: a.Env, Cwd: a.Cwd},
		host.Options{ClientInfo: acp.Implementation{Name: "openheim", Version: version}, WorkDir: cfg.WorkDir, Redact: red})
	if err != nil {
		row.ProbeErr = red.String(err.Error())
		return
	}
	ms := time.Since(start).Milliseconds()
	info := h.Info()
	row.Probe, row.StartupMs = &info, &ms
	h.Close()
}

func describeProbe(r acpAgentJSON) string {
	s := "?"
	if ai := r.Probe.AgentInfo; ai != nil {
		s = ai.Name + " " + ai.Version
	}
	var caps struct {
		LoadSession         bool                       `json:"loadSession"`
		SessionCapabilities map[string]json.RawMessage `json:"sessionCapabilities"`
	}
	json.Unmarshal(r.Probe.Capabilities, &caps)
	var list []string
	if caps.LoadSession {
		list = append(list, "load")
	}
	for _, k := range []string{"list", "resume", "fork", "close", "delete"} {
		if v, ok := caps.SessionCapabilities[k]; ok && string(v) != "null" {
			list = append(list, k)
		}
	}
	if len(list) > 0 {
		s += " (" + strings.Join(list, ",") + ")"
	}
	if r.StartupMs != nil {
		s += fmt.Sprintf(" %dms", *r.StartupMs)
	}
	return s
}

func authNames(methods []json.RawMessage) string {
	var out []string
	for _, m := range methods {
		var am struct{ ID, Name, Type string }
		json.Unmarshal(m, &am)
		n := am.ID
		if am.Type != "" {
			n += "(" + am.Type + ")"
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return "-"
	}
	return strings.Join(out, ", ")
}
