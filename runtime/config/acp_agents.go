package config

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
)

// ACPAgent is an external ACP agent: [acp_agents.<name>]. ExtraArgs come
// after Args (so a preset's launch sequence can be kept while adding
// flags).
type ACPAgent struct {
	Command   string            `toml:"command"`
	Args      []string          `toml:"args"`
	ExtraArgs []string          `toml:"extra_args"`
	Env       map[string]string `toml:"env"`
	Cwd       string            `toml:"cwd"`
	// Kind says which agent this is when its command line does not (a
	// wrapper script): one of the AgentKind constants; "" detects it.
	Kind string `toml:"kind"`
	// CaptureContent is how much of a message of the agent's that did not
	// decode is kept for the protocol-error hook and the debug log: none,
	// metadata (its shape, the default) or full (secrets masked).
	CaptureContent string `toml:"capture_content"`
	// Preset names the built-in agent this one was taken from ("" for a
	// configured one).
	Preset string `toml:"-"`
	// ACPProfile is how openheim sets the agent up (acp_profile.go).
	ACPProfile
}

// Agent kinds: the external agents whose own settings openheim knows how
// to set from its rules (the ACP host's per-agent projection), openheim
// itself, and any other agent (no projection).
const (
	AgentKindClaude   = "claude-agent-acp"
	AgentKindCodex    = "codex-acp"
	AgentKindOpenCode = "opencode"
	AgentKindGemini   = "gemini"
	AgentKindOpenheim = "openheim"
	AgentKindOther    = "other"
)

// captureContents are the values of capture_content (the ACP host's
// CaptureNone, CaptureMetadata, CaptureFull).
var captureContents = []string{"none", "metadata", "full"}

var agentKinds = []string{AgentKindClaude, AgentKindCodex, AgentKindOpenCode, AgentKindGemini, AgentKindOpenheim, AgentKindOther}

// AgentKind is the kind of agent a runs: its kind key, else its preset's
// name, else the package or program its command line names
// (@zed-industries/claude-agent-acp, its former name claude-code-acp,
// codex-acp, opencode(-ai) or gemini(-cli); with or without a version or a
// path), else "other".
func (a ACPAgent) AgentKind() string {
	switch {
	case a.Kind != "":
		return a.Kind
	case a.Preset != "":
		return a.Preset
	}
	for _, tok := range append([]string{a.Command}, a.Args...) {
		tok = strings.ToLower(tok)
		switch {
		case strings.Contains(tok, "claude-agent-acp"), strings.Contains(tok, "claude-code-acp"):
			return AgentKindClaude
		case strings.Contains(tok, "codex-acp"):
			return AgentKindCodex
		case programIs(tok, "opencode", "opencode-ai"):
			return AgentKindOpenCode
		case programIs(tok, "gemini", "gemini-cli"):
			return AgentKindGemini
		}
	}
	return AgentKindOther
}

// programIs reports whether tok names one of the programs: its base name,
// an npm package (@scope/name) or either with @version.
func programIs(tok string, names ...string) bool {
	tok = tok[strings.LastIndexAny(tok, `/\`)+1:]
	if i := strings.LastIndex(tok, "@"); i > 0 {
		tok = tok[:i]
	}
	return slices.Contains(names, tok)
}

// ACPPresets are the agents known without configuration: Zed's adapters
// for Claude Code and Codex (run through npx), OpenCode and Gemini CLI
// (installed on PATH), and openheim itself.
func ACPPresets() map[string]ACPAgent {
	self, err := os.Executable()
	if err != nil {
		self = "openheim"
	}
	return map[string]ACPAgent{
		"claude-agent-acp": {Command: "npx", Args: []string{"-y", "@zed-industries/claude-agent-acp"}, Preset: "claude-agent-acp"},
		"codex-acp":        {Command: "npx", Args: []string{"-y", "@zed-industries/codex-acp"}, Preset: "codex-acp"},
		"opencode":         {Command: "opencode", Args: []string{"acp"}, Preset: "opencode"},
		"gemini":           {Command: "gemini", Args: []string{"--experimental-acp"}, Preset: "gemini"},
		"openheim":         {Command: self, Args: []string{"acp"}, Preset: "openheim"},
	}
}

// ACPAgentNamed returns agent name: configured, else a preset. A
// configured agent with a preset's name and no command takes the preset's
// launch sequence with its own extra_args, env and cwd.
func (c *Config) ACPAgentNamed(name string) (ACPAgent, error) {
	presets := ACPPresets()
	if a, ok := c.ACPAgents[name]; ok && a != nil {
		out := *a
		if out.Command == "" {
			p, ok := presets[name]
			if !ok {
				return ACPAgent{}, fmt.Errorf("acp_agents.%s: command is required", name)
			}
			out.Command, out.Args, out.Preset = p.Command, p.Args, p.Preset
		}
		return out, nil
	}
	if p, ok := presets[name]; ok {
		return p, nil
	}
	return ACPAgent{}, fmt.Errorf("no ACP agent %q (agents: %s)", name, strings.Join(c.ACPAgentNames(), ", "))
}

// ACPAgentNames lists the configured agents and the presets, sorted.
func (c *Config) ACPAgentNames() []string {
	seen := map[string]bool{}
	var out []string
	for name := range c.ACPAgents {
		seen[name] = true
		out = append(out, name)
	}
	for name := range ACPPresets() {
		if !seen[name] {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

func (c *Config) validateACPAgents() error {
	for _, name := range sortedKeys(c.ACPAgents) {
		a := c.ACPAgents[name]
		if a == nil {
			a = &ACPAgent{}
			c.ACPAgents[name] = a
		}
		if a.Command == "" {
			if _, preset := ACPPresets()[name]; !preset {
				return keyErr("acp_agents."+name+".command", "is required")
			}
		}
		if a.Cwd != "" {
			a.Cwd = resolveAgainst(c.Dir(), a.Cwd)
			if fi, err := os.Stat(a.Cwd); err != nil || !fi.IsDir() {
				return keyErr("acp_agents."+name+".cwd", "%s is not a directory", a.Cwd)
			}
		}
		if a.Kind != "" && !slices.Contains(agentKinds, a.Kind) {
			return keyErr("acp_agents."+name+".kind", "%q is not a known kind (%s)", a.Kind, strings.Join(agentKinds, ", "))
		}
		if c := a.CaptureContent; c != "" && !slices.Contains(captureContents, c) {
			return keyErr("acp_agents."+name+".capture_content", "%q is not one of %s", c, strings.Join(captureContents, ", "))
		}
		if strings.ContainsAny(name, "/ ") {
			return keyErr("acp_agents."+name, "a name may not contain spaces or '/'")
		}
		if err := a.ACPProfile.validate("acp_agents." + name); err != nil {
			return err
		}
	}
	return nil
}
