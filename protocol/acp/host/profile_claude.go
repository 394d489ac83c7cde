package host

import (
	"maps"
	"slices"

	"github.com/openheim/openheim/runtime/permission"
)

// ClaudeCodeOptions is the typed form of claude-agent-acp's
// _meta.claudeCode.options (seed 002): the Claude Agent SDK's query
// options, read afresh on every session/new, load and resume.
type ClaudeCodeOptions struct {
	// Tools, when not nil, are the only tools the model is offered.
	Tools []string
	// DisallowedTools are taken from the model entirely.
	DisallowedTools []string
	// AllowedTools run without a permission prompt.
	AllowedTools []string
	// Settings are flag-level settings (above user and project settings),
	// e.g. {"permissions": {"ask": [...], "deny": [...]}}.
	Settings map[string]any
	// Extra are further SDK options, passed as they are.
	Extra map[string]any
}

// Meta is the options as session _meta.
func (o ClaudeCodeOptions) Meta() map[string]any {
	opts := maps.Clone(o.Extra)
	if opts == nil {
		opts = map[string]any{}
	}
	if o.Tools != nil {
		opts["tools"] = o.Tools
	}
	if len(o.DisallowedTools) > 0 {
		opts["disallowedTools"] = o.DisallowedTools
	}
	if len(o.AllowedTools) > 0 {
		opts["allowedTools"] = o.AllowedTools
	}
	if o.Settings != nil {
		opts["settings"] = o.Settings
	}
	return map[string]any{"claudeCode": map[string]any{"options": opts}}
}

// claudeAskTools are Claude Code's tools that read, write, run or fetch:
// an "ask" rule on each makes it ask (session/request_permission) before
// every use, where by default it reads inside its cwd and runs read-only
// commands (ls, git status) without asking, so openheim never saw them.
var claudeAskTools = []string{"Bash", "Read", "Edit", "Write", "NotebookEdit", "Glob", "Grep", "WebFetch", "WebSearch"}

// claudeKindTools are Claude Code's tools by the ACP kind openheim's rules
// judge their requests under.
var claudeKindTools = map[string][]string{
	"execute": {"Bash"},
	"edit":    {"Edit", "Write", "NotebookEdit"},
	"fetch":   {"WebFetch", "WebSearch"},
	"read":    {"Read"},
	"search":  {"Glob", "Grep"},
}

// ClaudeOptions are Claude Code's options from openheim's config: ask
// before every tool use (flag-level settings), settings-file hooks off (a
// project's hooks run commands without asking; the adapter's own SDK hooks
// still run), the tools of every kind openheim's rules deny (and Bash
// without allow_shell) taken from the model, plus the profile's own
// allowed_tools (no longer asked about), disallowed_tools and options.
func ClaudeOptions(b Bounds) ClaudeCodeOptions {
	var deny []string
	for _, kind := range slices.Sorted(maps.Keys(claudeKindTools)) {
		if b.kindDecision(kind) == permission.Deny {
			deny = append(deny, claudeKindTools[kind]...)
		}
	}
	deny = append(deny, b.Profile.DisallowedTools...)
	ask := slices.DeleteFunc(slices.Clone(claudeAskTools), func(t string) bool {
		return slices.Contains(b.Profile.AllowedTools, t)
	})
	return ClaudeCodeOptions{
		DisallowedTools: deny,
		AllowedTools:    b.Profile.AllowedTools,
		Settings:        map[string]any{"permissions": map[string]any{"ask": ask}, "disableAllHooks": true},
		Extra:           b.Profile.Options,
	}
}

// projectClaude sets Claude Code's options through _meta.claudeCode.options
// and its system prompt through _meta.systemPrompt (a string replaces
// Claude Code's, {"append": text} adds to it). A settings file's
// defaultMode "bypassPermissions" (a project's .claude/settings.json will
// do, for any user but root) is not overridden by those options
// (measured: Claude then wrote outside work_dir without asking), hence
// the switch back to "default". Claude Code's own sandbox is left off: it
// would run commands without asking (autoAllowBashIfSandboxed) and cut
// their network.
func projectClaude(b Bounds) Projection {
	unsafe := []string{"bypassPermissions"}
	if b.kindDecision("edit") != permission.Allow {
		unsafe = append(unsafe, "acceptEdits") // edits without asking, where openheim's rules ask
	}
	return Projection{SessionMeta: ClaudeOptions(b).Meta(), UnsafeModes: unsafe, SafeMode: "default",
		SystemPrompt: func(replace bool, text string) map[string]any {
			if replace {
				return map[string]any{SystemPromptMetaKey: text}
			}
			return map[string]any{SystemPromptMetaKey: map[string]any{"append": text}}
		}}
}
