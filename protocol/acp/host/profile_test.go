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
	"github.com/openheim/openheim/runtime/permission"
	"github.com/openheim/openheim/runtime/session"
)

// TestProfilesFollowOneSetOfRules: openheim's rules reach every agent in
// its own terms: a kind openheim denies is taken from Claude Code's model,
// makes Codex's sandbox read-only, and is denied in OpenCode's config;
// allow_outside folders become Codex's writable roots; the profile's own
// keys come on top.
func TestProfilesFollowOneSetOfRules(t *testing.T) {
	no := false
	b := Bounds{WorkDir: "/w", AllowShell: true,
		Rules: permission.Rules{Deny: []string{"edit", "fetch"}, AllowOutside: []string{"/tmp/**", "/data/*.csv"}},
		Profile: config.ACPProfile{AllowedTools: []string{"Read"}, DisallowedTools: []string{"Task"}, NetworkAccess: &no,
			WritableRoots: []string{"/cache"}, Options: map[string]any{"maxTurns": 3}}}
	cl := ClaudeOptions(b)
	for _, tool := range []string{"Edit", "Write", "NotebookEdit", "WebFetch", "WebSearch", "Task"} {
		if !slices.Contains(cl.DisallowedTools, tool) {
			t.Errorf("Claude: %s not disallowed: %v", tool, cl.DisallowedTools)
		}
	}
	ask := cl.Settings["permissions"].(map[string]any)["ask"].([]string)
	if slices.Contains(cl.DisallowedTools, "Bash") || slices.Contains(ask, "Read") || !slices.Contains(ask, "Bash") {
		t.Errorf("Claude: disallowed %v, ask %v", cl.DisallowedTools, ask)
	}
	if opts := cl.Meta()["claudeCode"].(map[string]any)["options"].(map[string]any); opts["maxTurns"] != 3 || opts["allowedTools"] == nil {
		t.Errorf("Claude options: %v", opts)
	}

	cx := CodexOptions(b)
	if cx.SandboxMode != "read-only" || !slices.Equal(cx.WritableRoots, []string{"/w", "/cache", "/tmp"}) || cx.ApprovalPolicy != "untrusted" {
		t.Errorf("Codex: %+v", cx)
	}
	b.Profile.Sandbox, b.Profile.ApprovalPolicy = "full-access", "on-request"
	args := strings.Join(CodexOptions(b).Args(), " ")
	for _, want := range []string{`-c maxTurns=3`, `-c sandbox_mode="danger-full-access"`, `-c approval_policy="on-request"`} {
		if !strings.Contains(args, want) {
			t.Errorf("Codex args %s lack %s", args, want)
		}
	}

	var oc map[string]any
	json.Unmarshal([]byte(OpenCodeOptions(b).JSON()), &oc)
	perm, _ := oc["permission"].(map[string]any)
	want := map[string]any{"*": "ask", "edit": "deny", "webfetch": "deny", "bash": "ask", "read": "allow", "external_directory": "ask", "Task": "deny"}
	for k, v := range want {
		if perm[k] != v {
			t.Errorf("OpenCode permission %s = %v, want %v (%v)", k, perm[k], v, perm)
		}
	}
	if oc["maxTurns"] != float64(3) {
		t.Errorf("OpenCode extra: %v", oc)
	}
	if p := Project(config.AgentKindOpenCode, Bounds{WorkDir: "/w"}); !strings.Contains(p.Env["OPENCODE_CONFIG_CONTENT"], `"bash":"deny"`) {
		t.Errorf("OpenCode without allow_shell: %v", p.Env)
	}
}

// TestSystemPromptProjection: Claude Code gets _meta.systemPrompt (a
// string replaces, {append} adds); Codex gets it when it starts
// (developer_instructions, or model_instructions_file for a replacement,
// a file removed when the agent exits) and no session _meta; other agents
// get seed 002's reserved keys.
func TestSystemPromptProjection(t *testing.T) {
	claude := Project(config.AgentKindClaude, Bounds{WorkDir: "/w"})
	m, _ := SessionOptions{SystemPrompt: "You are X."}.meta(claude)
	if m[SystemPromptMetaKey] != "You are X." {
		t.Errorf("claude replace: %v", m)
	}
	codex := Project(config.AgentKindCodex, Bounds{WorkDir: "/w", Prompt: SystemPrompt{Text: "Be terse."}})
	if m, _ := (SessionOptions{AppendSystemPrompt: "Be terse."}).meta(codex); len(m) != 0 {
		t.Errorf("codex session _meta: %v", m)
	}
	if !slices.Contains(codex.Args, `developer_instructions="Be terse."`) {
		t.Errorf("codex args: %v", codex.Args)
	}
	other, _ := SessionOptions{AppendSystemPrompt: "A"}.meta(Projection{})
	if other[AppendSystemPromptMetaKey] != "A" {
		t.Errorf("other: %v", other)
	}

	// A replacement reaches Codex as a file it reads.
	dir := t.TempDir()
	argsFile := filepath.Join(dir, "args")
	script := filepath.Join(dir, "agent.sh")
	os.WriteFile(script, []byte(`printf '%s\n' "$@" > `+argsFile+"\n"+`for a in "$@"; do case "$a" in model_instructions_file=*) f=${a#*=}; f=${f#\"}; cat "${f%\"}" > `+dir+`/seen;; esac; done`+"\n"+deafAgent), 0o755)
	store, _ := session.NewFileStore(filepath.Join(dir, "history"))
	cfg := &config.Config{WorkDir: dir, ACPAgents: map[string]*config.ACPAgent{"codex": {Command: "sh", Args: []string{script},
		Kind: config.AgentKindCodex, ACPProfile: config.ACPProfile{SystemPrompt: "Only say hi."}}}}
	r := &Runner{Engine: &engine.Engine{Config: cfg, Store: store}, Agent: "codex"}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h, err := r.Host(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if seen, _ := os.ReadFile(filepath.Join(dir, "seen")); string(seen) != "Only say hi." {
		t.Errorf("Codex read %q from its instructions file", seen)
	}
	files := h.filesDir
	r.Close()
	if _, err := os.Stat(files); !os.IsNotExist(err) {
		t.Errorf("the instructions file outlived the agent: %v", err)
	}
	if _, err := r.hostFor(ctx, "Another identity"); err != nil {
		t.Fatal(err) // a new process: started with it
	}
	if _, err := r.hostFor(ctx, "A third one"); err == nil || !strings.Contains(err.Error(), "when it starts") {
		t.Errorf("another identity on a running Codex: %v", err)
	}
	r.Close()
}

// TestProfilePromptReachesSession: the profile's append_system_prompt goes
// into the sessions the Runner opens; a turn's identity replaces it.
func TestProfilePromptReachesSession(t *testing.T) {
	cfg := &config.Config{WorkDir: t.TempDir()}
	r, rec := fakeRunner(t, acptest.Script{}, cfg, false)
	cfg.ACPAgents["fake"].AppendSystemPrompt = "House rules."
	promptOn(t, r, "", "one")
	if got := rec.Method(acp.MethodSessionNew); len(got) != 1 || !strings.Contains(string(got[0].Params), `"appendSystemPrompt":"House rules."`) {
		t.Errorf("session/new: %+v", got)
	}
}
