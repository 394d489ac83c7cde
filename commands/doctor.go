package commands

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/mcp"
	"github.com/urfave/cli/v3"
)

// DoctorOptions is everything `openheim doctor` needs.
type DoctorOptions struct {
	IO         *IOStreams
	Config     func() (*config.Config, error)
	ConfigPath func() string // --config, "" for the default file
	Home       func() string
	Sessions   func() (*Sessions, error)
	MCP        func(ctx context.Context, cfg *config.Config, only string) (*mcp.Manager, error)
	Version    string
	Offline    bool
	Output     jsonOutput
}

// Check statuses: a failed check makes doctor exit 1; a warning does not.
const (
	checkOK   = "ok"
	checkWarn = "warn"
	checkFail = "fail"
	checkSkip = "skip"
)

// check is one line of doctor's report (one object of --json).
type check struct {
	Check string `json:"check"`          // config, data_dir, provider, mcp_server, acp_agent, sessions_index, memory
	Name  string `json:"name,omitempty"` // the provider's, server's or agent's
	// Default marks the default provider.
	Default bool   `json:"default,omitempty"`
	Status  string `json:"status"` // ok, warn, fail, skip
	Detail  string `json:"detail"`
	Hint    string `json:"hint,omitempty"`
}

func newCmdDoctor(f *Factory, runF func(context.Context, *DoctorOptions) error) *cli.Command {
	opts := &DoctorOptions{IO: f.IOStreams, Config: f.Config, ConfigPath: func() string { return f.ConfigPath() }, Home: f.Home,
		Sessions: f.Sessions, MCP: f.MCP, Version: f.Version}
	return &cli.Command{
		Name:  "doctor",
		Usage: "check the setup: config, provider keys and endpoints, MCP servers, ACP agents, data directory, indexes",
		Description: `Checks what openheim needs and says, one line each, what is wrong and how to
fix it: the config file is found and valid; each provider has its key and
its endpoint answers (a models list: no tokens are spent); each MCP server
connects (with its tool count); each [acp_agents] agent starts and answers
initialize; the data directory is writable and private; the session index is
in step; memory's semantic search has what it needs.

--offline skips what needs the network: provider endpoints and MCP servers
over HTTP. --json prints one {check, name, status, detail, hint} per line.
The exit code is 1 when a check fails (warnings do not count), 0 otherwise.

Examples:
  openheim doctor
  openheim doctor --offline
  openheim doctor --json | jq -r 'select(.status == "fail") | .hint'`,
		Flags: append(jsonFlags(), &cli.BoolFlag{Name: "offline", Usage: "skip the checks that need the network (provider endpoints, MCP servers over HTTP)"}),
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if err := noArgs(cmd); err != nil {
				return err
			}
			opts.Offline, opts.Output = cmd.Bool("offline"), jsonOutputOf(cmd)
			return run(ctx, opts, runF, doctorRun)
		},
	}
}

func doctorRun(ctx context.Context, opts *DoctorOptions) error {
	var checks []check
	add := func(c ...check) { checks = append(checks, c...) }
	cfg, cfgCheck := checkConfig(opts)
	add(cfgCheck)
	add(checkDataDir(opts.Home()))
	if cfg != nil {
		add(checkProviders(ctx, cfg, opts.Offline)...)
		add(checkMCPServers(ctx, cfg, opts)...)
		add(checkACPAgents(ctx, cfg, opts)...)
	}
	add(checkSessionIndex(opts))
	if cfg != nil {
		add(checkMemory(cfg, opts))
	}
	if err := printChecks(opts, checks); err != nil {
		return err
	}
	failed := 0
	for _, c := range checks {
		if c.Status == checkFail {
			failed++
		}
	}
	if failed > 0 {
		return &ExitError{Code: ExitFailure, Silent: true}
	}
	return nil
}

// checkConfig loads the config: found and valid.
func checkConfig(opts *DoctorOptions) (*config.Config, check) {
	path := opts.ConfigPath()
	if path == "" {
		path = config.DefaultPath()
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, check{Check: "config", Status: checkFail, Detail: "no config file at " + path,
				Hint: "run 'openheim init' to write a commented one"}
		}
	}
	cfg, err := opts.Config()
	if err != nil {
		var ee *ExitError
		if errors.As(err, &ee) {
			err = ee.Err
		}
		return nil, check{Check: "config", Status: checkFail, Detail: err.Error(), Hint: "fix the key it names (docs/configuration.md)"}
	}
	detail := fmt.Sprintf("%s: %s, %s, %s", cfg.Path(), plural(len(cfg.Providers), "provider"),
		plural(len(cfg.MCPServers), "MCP server"), "work_dir "+cfg.WorkDir)
	if len(cfg.Providers) == 0 {
		return cfg, check{Check: "config", Status: checkFail, Detail: detail, Hint: "add a [providers.<name>] table ('openheim init' writes examples)"}
	}
	return cfg, check{Check: "config", Status: checkOK, Detail: detail}
}

// checkDataDir: the data directory can be written and others cannot read
// it (sessions hold what was said, serve's token is a password).
func checkDataDir(home string) check {
	c := check{Check: "data_dir", Detail: home}
	fi, err := os.Stat(home)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c.Status, c.Detail = checkWarn, home+" does not exist yet"
		c.Hint = "it is created (mode 0700) on first use"
		return c
	case err != nil:
		c.Status, c.Detail = checkFail, err.Error()
		return c
	case !fi.IsDir():
		c.Status, c.Detail = checkFail, home+" is not a directory"
		return c
	}
	probe, err := os.CreateTemp(home, ".doctor-*")
	if err != nil {
		c.Status, c.Detail, c.Hint = checkFail, "cannot write in "+home+": "+err.Error(), "fix its owner or permissions"
		return c
	}
	probe.Close()
	os.Remove(probe.Name())
	c.Status, c.Detail = checkOK, fmt.Sprintf("%s (%04o), writable", home, fi.Mode().Perm())
	if fi.Mode().Perm()&0o077 != 0 {
		c.Status, c.Hint = checkWarn, "others can read it (sessions, serve's token): chmod 700 "+home
	}
	if ti, err := os.Stat(home + "/serve_token"); err == nil && ti.Mode().Perm()&0o077 != 0 {
		c.Status, c.Hint = checkWarn, "serve_token is readable by others: chmod 600 "+home+"/serve_token"
	}
	return c
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// printChecks writes the report: a table for people, NDJSON for scripts.
func printChecks(opts *DoctorOptions, checks []check) error {
	ios := opts.IO
	if opts.Output.machine() {
		for _, c := range checks {
			if err := opts.Output.print(ios, c); err != nil {
				return err
			}
		}
		return nil
	}
	marks := map[string]string{checkOK: "✓", checkWarn: "!", checkFail: "✗", checkSkip: "-"}
	tw := newTable(ios.Out)
	counts := map[string]int{}
	for _, c := range checks {
		counts[c.Status]++
		what := strings.ReplaceAll(c.Check, "_", " ")
		if c.Name != "" {
			what += " " + c.Name
		}
		if c.Default {
			what += " (default)"
		}
		line := c.Detail
		if c.Hint != "" {
			line += " → " + c.Hint
		}
		fmt.Fprintf(tw, "%s %s\t%s\n", marks[c.Status], what, oneLineKeep(line))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	switch {
	case counts[checkFail] > 0:
		fmt.Fprintf(ios.Out, "%s, %s\n", plural(counts[checkFail], "problem"), plural(counts[checkWarn], "warning"))
	case counts[checkWarn] > 0:
		fmt.Fprintf(ios.Out, "no problems, %s\n", plural(counts[checkWarn], "warning"))
	default:
		fmt.Fprintln(ios.Out, "no problems")
	}
	return nil
}

// oneLineKeep puts s on one line without cutting it: doctor's hints must
// be read whole.
func oneLineKeep(s string) string { return strings.Join(strings.Fields(s), " ") }
