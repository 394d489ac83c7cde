//go:build unix

package host

import (
	"context"
	"fmt"
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
	"github.com/openheim/openheim/runtime/llm/llmtest"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/permission"
	"github.com/openheim/openheim/runtime/session"
)

// Real turns of the npm agents against the fake LLM servers, where a
// profile setting shows only in what the agent sends its model.

// profileRun runs one turn of agent (configured as a) and returns the
// requests its model got.
func profileRun(t *testing.T, a *config.ACPAgent, env []string, work string, srv *llmtest.Server) []llmtest.RecordedRequest {
	t.Helper()
	store, err := session.NewFileStore(filepath.Join(t.TempDir(), "history"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{WorkDir: work, ACPAgents: map[string]*config.ACPAgent{"agent": a}}
	r := &Runner{Engine: &engine.Engine{Config: cfg, Store: store}, Agent: "agent", environ: env}
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	_, end, err := r.Prompt(ctx, engine.Request{Input: []message.Block{message.Text("hello")}, Gate: engine.Asking(permission.DenyAsker)})
	if err != nil || end.Err != nil {
		t.Fatalf("prompt: %v %v", err, end.Err)
	}
	return srv.Requests()
}

// TestClaudeRealSystemPrompt: [acp_agents.X] append_system_prompt reaches
// Claude Code's model as part of its system prompt (_meta.systemPrompt
// {append}; the reserved appendSystemPrompt key never did).
func TestClaudeRealSystemPrompt(t *testing.T) {
	cmd, args := acptest.NPMAgent(t, "claude-agent-acp")
	srv := llmtest.New()
	t.Cleanup(srv.Close)
	srv.Enqueue(llmtest.Reply{Text: []string{"hi"}}, llmtest.Reply{Text: []string{"hi"}})
	env := append(acptest.OfflineEnv(t), "ANTHROPIC_BASE_URL="+strings.TrimSuffix(srv.URL(), "/v1"), "ANTHROPIC_API_KEY=test-key",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1", "IS_SANDBOX=1")
	const marker = "OPENHEIM-HOUSE-RULE-7319: answer in haiku."
	reqs := profileRun(t, &config.ACPAgent{Command: cmd, Args: args, ACPProfile: config.ACPProfile{AppendSystemPrompt: marker}}, env, t.TempDir(), srv)
	var systems []string
	for _, rq := range reqs {
		if rq.Path != "/v1/messages" {
			continue
		}
		s := fmt.Sprint(rq.Body["system"])
		systems = append(systems, s)
		if strings.Contains(s, marker) && strings.Contains(s, "Claude") {
			return // appended: Claude Code's own prompt is still there
		}
	}
	t.Errorf("no request carried the appended system prompt with Claude Code's own; systems: %.400q", systems)
}

// TestCodexRealProfile: Codex's overrides from the profile reach its
// model: developer_instructions (append_system_prompt) in the request,
// and the profile's model chosen through the model option.
func TestCodexRealProfile(t *testing.T) {
	cmd, args := acptest.NPMAgent(t, "codex-acp")
	srv := llmtest.New()
	t.Cleanup(srv.Close)
	srv.Enqueue(llmtest.Reply{Text: []string{"hi"}})
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(cache, 0o755)
	home, err := os.MkdirTemp(cache, "openheim-host-codex-") // Codex refuses CODEX_HOME under the temp dir
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	os.WriteFile(filepath.Join(home, "config.toml"), []byte(`model_provider = "fake"
model = "gpt-fake"
[model_providers.fake]
name = "fake"
base_url = "`+srv.URL()+`"
env_key = "FAKE_API_KEY"
wire_api = "responses"
[features]
plugins = false
remote_plugin = false
[analytics]
enabled = false
`), 0o600)
	env := append(acptest.OfflineEnv(t), "CODEX_HOME="+home, "FAKE_API_KEY=x")
	const marker = "OPENHEIM-HOUSE-RULE-4471"
	reqs := profileRun(t, &config.ACPAgent{Command: cmd, Args: args,
		ACPProfile: config.ACPProfile{AppendSystemPrompt: marker, Model: "gpt-5.4"}}, env, t.TempDir(), srv)
	for _, rq := range reqs {
		if rq.Path == "/v1/responses" && strings.Contains(string(rq.Raw), marker) {
			if rq.Body["model"] != "gpt-5.4" {
				t.Errorf("the profile's model did not reach Codex's request: %v", rq.Body["model"])
			}
			return
		}
	}
	t.Errorf("no Responses request carried developer_instructions; %d requests", len(reqs))
}

// TestClaudeRealLifecycle: the real Claude Code forks a session
// (session/fork; the fork's next turn carries the original's history to
// the model), lists it (session/list), closes it (session/close), and a
// new process reattaches to it (session/load) with its history.
func TestClaudeRealLifecycle(t *testing.T) {
	cmd, args := acptest.NPMAgent(t, "claude-agent-acp")
	srv := llmtest.New()
	t.Cleanup(srv.Close)
	for range 8 {
		srv.Enqueue(llmtest.Reply{Text: []string{"ok"}})
	}
	env := append(acptest.OfflineEnv(t), "ANTHROPIC_BASE_URL="+strings.TrimSuffix(srv.URL(), "/v1"), "ANTHROPIC_API_KEY=test-key",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1", "IS_SANDBOX=1")
	work := t.TempDir()
	store, err := session.NewFileStore(filepath.Join(t.TempDir(), "history"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{WorkDir: work, ACPAgents: map[string]*config.ACPAgent{"claude": {Command: cmd, Args: args}}}
	newRunner := func() *Runner {
		return &Runner{Engine: &engine.Engine{Config: cfg, Store: store}, Agent: "claude", environ: env}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 180*time.Second)
	defer cancel()
	turn := func(r *Runner, id, text string) string {
		t.Helper()
		m, end, err := r.Prompt(ctx, engine.Request{SessionID: id, Input: []message.Block{message.Text(text)}, Gate: engine.Asking(permission.DenyAsker)})
		if err != nil || end.Err != nil {
			t.Fatalf("%s: %v %v", text, err, end.Err)
		}
		return m.ID
	}
	sawInLastRequest := func(text string) bool {
		reqs := srv.Requests()
		return len(reqs) > 0 && strings.Contains(string(reqs[len(reqs)-1].Raw), text)
	}
	r := newRunner()
	orig := turn(r, "", "MARKER-ORIGINAL-1")
	forked, err := r.Fork(ctx, orig)
	if err != nil {
		t.Fatal(err)
	}
	turn(r, forked.ID, "MARKER-FORK-2")
	if !sawInLastRequest("MARKER-ORIGINAL-1") {
		t.Error("the fork's turn did not carry the original's history to the model")
	}
	om, _ := store.LoadMeta(orig)
	list, err := r.AgentSessions(ctx, work)
	if err != nil || !slices.ContainsFunc(list, func(s acp.SessionInfo) bool { return s.SessionID == om.ACP.SessionID }) {
		t.Errorf("session/list: %v %+v", err, list)
	}
	if err := r.CloseAgentSession(ctx, om.ACP.SessionID); err != nil {
		t.Errorf("session/close: %v", err)
	}
	r.Close()
	r2 := newRunner()
	defer r2.Close()
	turn(r2, orig, "MARKER-AGAIN-3")
	if !sawInLastRequest("MARKER-ORIGINAL-1") || sawInLastRequest("MARKER-FORK-2") {
		t.Error("the reattached session's turn did not carry its own history (and only its own)")
	}
}
