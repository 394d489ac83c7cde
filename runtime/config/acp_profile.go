package config

import (
	"slices"
	"strings"
)

// ACPProfile is how openheim sets up an external agent beyond starting it
// (seed 002's AgentConfig, InitialConfig and QueuePolicy): the session
// settings it asks for, the system prompt, and the agent's own options.
// The ACP host projects each into the agent's native form (Claude Code's
// _meta.claudeCode.options, Codex's -c overrides, OpenCode's config);
// what a kind of agent has no place for is reported and left out.
type ACPProfile struct {
	// Model, Mode and Effort are asked of every session the agent opens
	// (its model selector, session/set_mode, its thought-level option);
	// Config sets further session config options by id.
	Model  string         `toml:"model"`
	Mode   string         `toml:"mode"`
	Effort string         `toml:"effort"`
	Config map[string]any `toml:"config"`
	// SystemPrompt replaces the agent's system prompt; AppendSystemPrompt
	// adds to it. At most one may be set.
	SystemPrompt       string `toml:"system_prompt"`
	AppendSystemPrompt string `toml:"append_system_prompt"`
	// AllowedTools run without a permission prompt (the agent's own tool
	// names or patterns, e.g. Claude's "Read"); DisallowedTools are taken
	// from the model entirely.
	AllowedTools    []string `toml:"allowed_tools"`
	DisallowedTools []string `toml:"disallowed_tools"`
	// Sandbox is the agent's own sandbox level (read-only,
	// workspace-write, full-access); ApprovalPolicy, WritableRoots and
	// NetworkAccess are Codex's.
	Sandbox        string   `toml:"sandbox"`
	ApprovalPolicy string   `toml:"approval_policy"`
	WritableRoots  []string `toml:"writable_roots"`
	NetworkAccess  *bool    `toml:"network_access"`
	// Queue says what a prompt sent while a turn runs does: wait for the
	// turn ("queue", the default), join the next prompt ("coalesce"), or
	// fail ("reject").
	Queue string `toml:"queue"`
	// Options are native fields passed as they are (Claude Code's SDK
	// options, Codex's config keys, OpenCode's config).
	Options map[string]any `toml:"options"`
}

// Queue policies of ACPProfile.Queue.
const (
	QueueWait     = "queue"
	QueueCoalesce = "coalesce"
	QueueReject   = "reject"
)

// Sandbox levels of ACPProfile.Sandbox.
var sandboxLevels = []string{"read-only", "workspace-write", "full-access"}

// Codex's approval policies.
var approvalPolicies = []string{"untrusted", "on-request", "on-failure", "never"}

func (p ACPProfile) validate(key string) error {
	switch {
	case p.SystemPrompt != "" && p.AppendSystemPrompt != "":
		return keyErr(key, "set system_prompt or append_system_prompt, not both")
	case p.Queue != "" && !slices.Contains([]string{QueueWait, QueueCoalesce, QueueReject}, p.Queue):
		return keyErr(key+".queue", "%q is not a queue policy (queue, coalesce, reject)", p.Queue)
	case p.Sandbox != "" && !slices.Contains(sandboxLevels, p.Sandbox):
		return keyErr(key+".sandbox", "%q is not a sandbox level (%s)", p.Sandbox, strings.Join(sandboxLevels, ", "))
	case p.ApprovalPolicy != "" && !slices.Contains(approvalPolicies, p.ApprovalPolicy):
		return keyErr(key+".approval_policy", "%q is not an approval policy (%s)", p.ApprovalPolicy, strings.Join(approvalPolicies, ", "))
	}
	for i, r := range p.WritableRoots {
		if !strings.HasPrefix(r, "/") {
			return keyErr(key+".writable_roots", "entry %d %q is not an absolute path", i+1, r)
		}
	}
	return nil
}

// QueuePolicy is the profile's queue policy, "queue" when unset.
func (p ACPProfile) QueuePolicy() string {
	if p.Queue == "" {
		return QueueWait
	}
	return p.Queue
}
