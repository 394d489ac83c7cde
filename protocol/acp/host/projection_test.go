//go:build unix

package host

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/protocol/acp/host/acptest"
	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/session"
)

func claudeOptions(t *testing.T, p Projection) map[string]any {
	t.Helper()
	cc, _ := p.SessionMeta["claudeCode"].(map[string]any)
	opts, _ := cc["options"].(map[string]any)
	if opts == nil {
		t.Fatalf("no claudeCode.options in %v", p.SessionMeta)
	}
	return opts
}

func TestProject(t *testing.T) {
	noShell := claudeOptions(t, Project(config.AgentKindClaude, Bounds{WorkDir: "/w"}))
	if got := noShell["disallowedTools"]; !slices.Equal(got.([]string), []string{"Bash"}) {
		t.Errorf("without allow_shell disallowedTools = %v", got)
	}
	if noShell["settings"].(map[string]any)["disableAllHooks"] != true {
		t.Errorf("settings hooks stay on: %v", noShell["settings"])
	}
	perms := noShell["settings"].(map[string]any)["permissions"].(map[string]any)
	if ask := perms["ask"].([]string); !slices.Contains(ask, "Bash") || !slices.Contains(ask, "Read") {
		t.Errorf("permissions = %v", perms)
	}
	if shell := claudeOptions(t, Project(config.AgentKindClaude, Bounds{WorkDir: "/w", AllowShell: true})); shell["disallowedTools"] != nil {
		t.Errorf("with allow_shell Bash is still disallowed: %v", shell)
	}
	codex := Project(config.AgentKindCodex, Bounds{WorkDir: `/w/a "b"`})
	args := strings.Join(codex.Args, " ")
	for _, want := range []string{`-c sandbox_mode="workspace-write"`, `-c sandbox_workspace_write.writable_roots=["/w/a \"b\""]`, `-c approval_policy="untrusted"`} {
		if !strings.Contains(args, want) {
			t.Errorf("codex args %s lack %s", args, want)
		}
	}
	for _, kind := range []string{config.AgentKindOther, config.AgentKindOpenheim, ""} {
		if p := Project(kind, Bounds{WorkDir: "/w"}); p.Args != nil || p.SessionMeta != nil {
			t.Errorf("%q: %+v", kind, p)
		}
	}
}

// TestProjectionReachesSessions: the projection's _meta is merged into
// session/new (beside the system prompt, projected to Claude Code's
// _meta.systemPrompt) and session/load.
func TestProjectionReachesSessions(t *testing.T) {
	proj := Project(config.AgentKindClaude, Bounds{WorkDir: "/w"})
	h, rec := inProcess(t, acptest.Script{}, Options{Projection: proj})
	id, err := h.NewSession(context.Background(), SessionOptions{AppendSystemPrompt: "be brief", Meta: map[string]any{"claudeCode": map[string]any{"x": 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.LoadSession(context.Background(), id, SessionOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{acp.MethodSessionNew, acp.MethodSessionLoad} {
		var p struct {
			Meta struct {
				Append       string `json:"appendSystemPrompt"`
				SystemPrompt struct {
					Append string `json:"append"`
				} `json:"systemPrompt"`
				ClaudeCode struct {
					X       int            `json:"x"`
					Options map[string]any `json:"options"`
				} `json:"claudeCode"`
			} `json:"_meta"`
		}
		got := rec.Method(m)
		if len(got) != 1 || json.Unmarshal(got[0].Params, &p) != nil {
			t.Fatalf("%s: %+v", m, got)
		}
		if p.Meta.ClaudeCode.Options["disallowedTools"] == nil {
			t.Errorf("%s carries no projection: %s", m, got[0].Params)
		}
		// Claude Code reads _meta.systemPrompt {append}, never the
		// reserved appendSystemPrompt.
		if m == acp.MethodSessionNew && (p.Meta.SystemPrompt.Append != "be brief" || p.Meta.Append != "" || p.Meta.ClaudeCode.X != 1) {
			t.Errorf("%s lost the caller's _meta: %s", m, got[0].Params)
		}
	}
}

// TestProjectionArgsReachTheAgent: an agent configured with kind
// codex-acp is started with the sandbox overrides after its own args.
func TestProjectionArgsReachTheAgent(t *testing.T) {
	dir := t.TempDir()
	argsFile := filepath.Join(dir, "args")
	script := filepath.Join(dir, "agent.sh")
	os.WriteFile(script, []byte(`printf '%s\n' "$@" > `+argsFile+"\n"+deafAgent), 0o755)
	store, err := session.NewFileStore(filepath.Join(dir, "history"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{WorkDir: dir, ACPAgents: map[string]*config.ACPAgent{
		"wrapped": {Command: "sh", Args: []string{script, "own"}, Kind: config.AgentKindCodex}}}
	r := &Runner{Engine: &engine.Engine{Config: cfg, Store: store}, Agent: "wrapped"}
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := r.Host(ctx); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(argsFile)
	got := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(got) < 3 || got[0] != "own" || got[1] != "-c" || got[2] != `sandbox_mode="workspace-write"` {
		t.Errorf("the agent got %q", got)
	}
}

// TestProjectionLeavesUnsafeMode: a session the agent opens in a mode
// where it acts without asking (Claude Code's bypassPermissions, from a
// settings file) is switched to the safe mode before use, on new and load.
func TestProjectionLeavesUnsafeMode(t *testing.T) {
	modes := json.RawMessage(`{"currentModeId":"bypassPermissions","availableModes":[{"id":"default","name":"Default"},{"id":"bypassPermissions","name":"Bypass"}]}`)
	h, rec := inProcess(t, acptest.Script{SessionModes: modes}, Options{Projection: Project(config.AgentKindClaude, Bounds{WorkDir: "/w"})})
	id, err := h.NewSession(context.Background(), SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.LoadSession(context.Background(), id, SessionOptions{}); err != nil {
		t.Fatal(err)
	}
	set := rec.Method(acp.MethodSessionSetMode)
	if len(set) != 2 || !strings.Contains(string(set[0].Params), `"modeId":"default"`) || !strings.Contains(string(set[0].Params), id) {
		t.Errorf("set_mode calls: %+v", set)
	}
	// Another kind has no unsafe modes: nothing is switched.
	h2, rec2 := inProcess(t, acptest.Script{SessionModes: modes}, Options{})
	if _, err := h2.NewSession(context.Background(), SessionOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := len(rec2.Method(acp.MethodSessionSetMode)); n != 0 {
		t.Errorf("%d set_mode calls without a projection", n)
	}
}
