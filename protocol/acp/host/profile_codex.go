package host

import (
	"encoding/json"
	"maps"
	"os/exec"
	"runtime"
	"slices"
	"strings"

	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/permission"
)

// CodexConfig is the typed form of Codex's config overrides (seed 002),
// passed to codex-acp as `-c key=value` (TOML values, over
// CODEX_HOME/config.toml): it reads its config once, when it starts.
type CodexConfig struct {
	Model          string
	SandboxMode    string // read-only, workspace-write, danger-full-access
	ApprovalPolicy string // untrusted, on-request, on-failure, never
	WritableRoots  []string
	NetworkAccess  *bool
	// DeveloperInstructions are added to Codex's instructions;
	// InstructionsFile replaces them (a file Codex reads).
	DeveloperInstructions string
	InstructionsFile      string
	Extra                 map[string]any
}

// tomlValue writes v as a TOML value: JSON strings, numbers, booleans and
// arrays of them are TOML too (an object is written as an inline table).
func tomlValue(v any) string {
	if m, ok := v.(map[string]any); ok {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(m)) {
			parts = append(parts, tomlKey(k)+" = "+tomlValue(m[k]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func tomlKey(k string) string {
	if k != "" && strings.Trim(k, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == "" {
		return k
	}
	return tomlValue(k)
}

// Args are the overrides as codex-acp's command-line flags.
func (c CodexConfig) Args() []string {
	var out []string
	set := func(k string, v any) { out = append(out, "-c", k+"="+tomlValue(v)) }
	for _, k := range slices.Sorted(maps.Keys(c.Extra)) {
		set(k, c.Extra[k])
	}
	if c.Model != "" {
		set("model", c.Model)
	}
	if c.SandboxMode != "" {
		set("sandbox_mode", c.SandboxMode)
	}
	if c.SandboxMode == "workspace-write" {
		if c.WritableRoots == nil {
			c.WritableRoots = []string{}
		}
		set("sandbox_workspace_write.writable_roots", c.WritableRoots)
		if c.NetworkAccess != nil {
			set("sandbox_workspace_write.network_access", *c.NetworkAccess)
		}
	}
	if c.ApprovalPolicy != "" {
		set("approval_policy", c.ApprovalPolicy)
	}
	if c.DeveloperInstructions != "" {
		set("developer_instructions", c.DeveloperInstructions)
	}
	if c.InstructionsFile != "" {
		set("model_instructions_file", c.InstructionsFile)
	}
	return out
}

// CodexOptions are Codex's overrides from openheim's config: commands run
// in the workspace-write sandbox (writes only in work_dir, the profile's
// writable_roots and the folders [permissions] allow_outside names, no
// network), read-only when openheim's rules deny edits; every command not
// on Codex's known-safe list is asked about (approval_policy
// "untrusted"), so openheim's rules decide. The profile's sandbox,
// approval_policy, network_access and options override these.
func CodexOptions(b Bounds) CodexConfig {
	no := false
	c := CodexConfig{SandboxMode: "workspace-write", ApprovalPolicy: "untrusted", NetworkAccess: &no, Extra: b.Profile.Options}
	if b.kindDecision("edit") == permission.Deny {
		c.SandboxMode = "read-only"
	}
	switch b.Profile.Sandbox {
	case "full-access":
		c.SandboxMode = "danger-full-access"
	case "":
	default:
		c.SandboxMode = b.Profile.Sandbox
	}
	if b.Profile.ApprovalPolicy != "" {
		c.ApprovalPolicy = b.Profile.ApprovalPolicy
	}
	if b.Profile.NetworkAccess != nil {
		c.NetworkAccess = b.Profile.NetworkAccess
	}
	c.WritableRoots = append([]string{b.WorkDir}, b.Profile.WritableRoots...)
	for _, g := range b.Rules.AllowOutside {
		if dir, ok := globDir(g); ok && !slices.Contains(c.WritableRoots, dir) {
			c.WritableRoots = append(c.WritableRoots, dir)
		}
	}
	p := b.Prompt
	if p.Text == "" {
		p = ProfilePrompt(b.Profile)
	}
	if p.Replace {
		c.InstructionsFile = "{{file:instructions.md}}"
	} else {
		c.DeveloperInstructions = p.Text
	}
	return c
}

// globDir is the directory an allow_outside glob covers whole ("/tmp/**"
// is /tmp); ok is false for a glob that names only some files.
func globDir(g string) (string, bool) {
	dir := strings.TrimSuffix(strings.TrimSuffix(g, "/**"), "/*")
	if dir == g || dir == "" || strings.ContainsAny(dir, "*?[{") {
		return "", false
	}
	return dir, true
}

// startPromptKinds are the kinds of agent that take their system prompt
// only when they start (Projection.ProcessPrompt).
var startPromptKinds = map[string]bool{config.AgentKindCodex: true}

// projectCodex sets Codex's sandbox, approvals and instructions with
// codex-acp's -c overrides (CodexOptions). Its modes are presets of those:
// "full-access" (no sandbox, no asking) is outside openheim's rules, and
// so is "auto" (commands run without asking) unless commands may run.
func projectCodex(b Bounds) Projection {
	c := CodexOptions(b)
	p := Projection{Args: c.Args(), ProcessPrompt: true, SafeMode: "read-only"}
	if b.Profile.Sandbox != "full-access" {
		p.UnsafeModes = append(p.UnsafeModes, "full-access")
	}
	if b.kindDecision("execute") != permission.Allow && !b.AllowShell {
		p.UnsafeModes = append(p.UnsafeModes, "auto")
	}
	if c.InstructionsFile != "" {
		text := b.Prompt.Text
		if text == "" {
			text = b.Profile.SystemPrompt
		}
		p.Files = map[string]string{"instructions.md": text}
	}
	if runtime.GOOS == "linux" && c.SandboxMode == "workspace-write" {
		if _, err := exec.LookPath("bwrap"); err != nil {
			p.Notes = append(p.Notes, "bubblewrap (bwrap) is not on PATH: Codex's workspace-write sandbox needs it on Linux, "+
				"so commands Codex runs sandboxed fail; when it asks to run one outside its sandbox, openheim's rules decide "+
				"(install bubblewrap for the sandbox)")
		}
	}
	return p
}
