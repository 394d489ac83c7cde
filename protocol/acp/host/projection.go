package host

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os/exec"
	"runtime"
	"slices"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/runtime/config"
)

// Projection is openheim's rules set into an agent's own settings, for the
// agents that have some (a sandbox, permission rules): arguments the host
// appends to its command line (after the configured ones, so they win)
// and _meta it merges into every session it opens. It narrows what the
// agent does on its own, without asking; what the agent asks about still
// goes to openheim's gate. This is the first piece of per-agent profiles:
// one projector per agent kind.
type Projection struct {
	Args        []string
	SessionMeta map[string]any
	// UnsafeModes are session modes in which the agent acts without
	// asking; a session the agent opens in one (its own settings chose
	// it) is switched to SafeMode with session/set_mode before it is used,
	// or not used at all.
	UnsafeModes []string
	SafeMode    string
	// Notes say what the projection could not set up here; the host logs
	// them when it starts the agent.
	Notes []string
}

// Bounds are the parts of openheim's config an agent's settings are set
// from.
type Bounds struct {
	WorkDir    string
	AllowShell bool
}

// projectors by agent kind (config.AgentKind*); other kinds get none.
var projectors = map[string]func(Bounds) Projection{
	config.AgentKindClaude: projectClaude,
	config.AgentKindCodex:  projectCodex,
}

// Project returns the projection for an agent of the given kind.
func Project(kind string, b Bounds) Projection {
	if p := projectors[kind]; p != nil {
		return p(b)
	}
	return Projection{}
}

// claudeAskTools are Claude Code's tools that read, write, run or fetch:
// an "ask" rule on each makes it ask (session/request_permission) before
// every use, where by default it reads inside its cwd and runs read-only
// commands (ls, git status) without asking, so openheim never saw them.
var claudeAskTools = []string{"Bash", "Read", "Edit", "Write", "NotebookEdit", "Glob", "Grep", "WebFetch", "WebSearch"}

// projectClaude sets Claude Code's permission settings through
// claude-agent-acp's _meta.claudeCode.options (the Agent SDK's query
// options): flag-level settings (above user and project settings) that
// ask before every tool use and turn settings-file hooks off (a project's
// hooks run commands without asking; the adapter's own SDK hooks still
// run), and without allow_shell no Bash tool at all (the model is not
// offered it). A settings file's defaultMode
// "bypassPermissions" (a project's .claude/settings.json will do, for any
// user but root) is not overridden by those options (measured: Claude then
// wrote outside work_dir without asking), hence the switch back to
// "default". Claude Code's own sandbox is left off: it would run commands
// without asking (autoAllowBashIfSandboxed) and cut their network.
func projectClaude(b Bounds) Projection {
	opts := map[string]any{
		"settings": map[string]any{"permissions": map[string]any{"ask": claudeAskTools}, "disableAllHooks": true},
	}
	if !b.AllowShell {
		opts["disallowedTools"] = []string{"Bash"}
	}
	return Projection{SessionMeta: map[string]any{"claudeCode": map[string]any{"options": opts}},
		UnsafeModes: []string{"bypassPermissions"}, SafeMode: "default"}
}

// projectCodex sets Codex's sandbox with codex-acp's `-c key=value`
// overrides (TOML values, applied over CODEX_HOME/config.toml): commands
// run in the workspace-write sandbox (writes only in work_dir and temp
// folders, no network), and every command not on Codex's known-safe list
// is asked about (approval_policy "untrusted"), so openheim's rules decide.
func projectCodex(b Bounds) Projection {
	root, _ := json.Marshal(b.WorkDir) // a JSON string is a TOML basic string
	p := Projection{Args: []string{
		"-c", `sandbox_mode="workspace-write"`,
		"-c", "sandbox_workspace_write.writable_roots=[" + string(root) + "]",
		"-c", "sandbox_workspace_write.network_access=false",
		"-c", `approval_policy="untrusted"`,
	}}
	if runtime.GOOS == "linux" {
		if _, err := exec.LookPath("bwrap"); err != nil {
			p.Notes = append(p.Notes, "bubblewrap (bwrap) is not on PATH: Codex's workspace-write sandbox needs it on Linux, "+
				"so commands Codex runs sandboxed fail; when it asks to run one outside its sandbox, openheim's rules decide "+
				"(install bubblewrap for the sandbox)")
		}
	}
	return p
}

// mergeMeta returns base with over merged in: objects merge key by key,
// anything else from over replaces base's.
func mergeMeta(base, over map[string]any) map[string]any {
	if len(over) == 0 {
		return base
	}
	out := maps.Clone(base)
	if out == nil {
		out = map[string]any{}
	}
	for k, v := range over {
		bm, ok1 := out[k].(map[string]any)
		om, ok2 := v.(map[string]any)
		if ok1 && ok2 {
			out[k] = mergeMeta(bm, om)
		} else {
			out[k] = v
		}
	}
	return out
}

// keepSafeMode switches session id out of an unsafe mode its agent opened
// it in (raw is the agent's answer to session/new, load, resume or fork,
// which carries modes.currentModeId when the agent has modes).
func (h *Host) keepSafeMode(ctx context.Context, id string, raw json.RawMessage) error {
	p := h.opts.Projection
	var resp struct {
		Modes *struct {
			CurrentModeID string `json:"currentModeId"`
		} `json:"modes"`
	}
	if json.Unmarshal(raw, &resp) != nil || resp.Modes == nil || !slices.Contains(p.UnsafeModes, resp.Modes.CurrentModeID) {
		return nil
	}
	mode := resp.Modes.CurrentModeID
	if err := h.call(ctx, acp.MethodSessionSetMode, acp.SetSessionModeRequest{SessionID: id, ModeID: p.SafeMode}, nil); err != nil {
		return fmt.Errorf("acp agent %s opened session %s in mode %q, where it acts without asking, and did not leave it: %w", h.spec.Name, id, mode, err)
	}
	h.log.Warn(fmt.Sprintf("acp agent %s: session %s opened in mode %q (its settings); switched to %q so that it asks", h.spec.Name, id, mode, p.SafeMode))
	return nil
}
