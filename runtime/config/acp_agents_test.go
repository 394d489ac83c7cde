package config

import (
	"strings"
	"testing"
)

func TestAgentKind(t *testing.T) {
	for _, tt := range []struct {
		a    ACPAgent
		want string
	}{
		{ACPAgent{Command: "npx", Args: []string{"-y", "@zed-industries/claude-agent-acp@0.23.1"}}, AgentKindClaude},
		{ACPAgent{Command: "/opt/node_modules/.bin/claude-agent-acp"}, AgentKindClaude},
		{ACPAgent{Command: "npx", Args: []string{"@zed-industries/claude-code-acp"}}, AgentKindClaude},
		{ACPAgent{Command: "npx", Args: []string{"-y", "@zed-industries/codex-acp"}}, AgentKindCodex},
		{ACPAgent{Command: "/usr/local/bin/Codex-ACP"}, AgentKindCodex},
		{ACPAgent{Command: "./my-wrapper.sh", Kind: AgentKindCodex}, AgentKindCodex},
		{ACPAgent{Command: "npx", Args: []string{"@zed-industries/codex-acp"}, Kind: AgentKindOther}, AgentKindOther},
		{ACPAgent{Command: "gemini", Args: []string{"--experimental-acp"}}, AgentKindGemini},
		{ACPAgent{Command: "npx", Args: []string{"-y", "opencode-ai@1.2", "acp"}}, AgentKindOpenCode},
		{ACPAgent{Command: "/usr/bin/opencodex"}, AgentKindOther},
		{ACPPresets()["claude-agent-acp"], AgentKindClaude},
		{ACPPresets()["openheim"], AgentKindOpenheim},
	} {
		if got := tt.a.AgentKind(); got != tt.want {
			t.Errorf("%+v: kind %q, want %q", tt.a, got, tt.want)
		}
	}
}

func TestLoadACPAgentKind(t *testing.T) {
	c, err := LoadWith(writeConfig(t, "[acp_agents.w]\ncommand = \"./w.sh\"\nkind = \"codex-acp\"\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if a, err := c.ACPAgentNamed("w"); err != nil || a.AgentKind() != AgentKindCodex {
		t.Errorf("%+v %v", a, err)
	}
	_, err = LoadWith(writeConfig(t, "[acp_agents.w]\ncommand = \"./w.sh\"\nkind = \"claude\"\n"), nil)
	if err == nil || !strings.Contains(err.Error(), `acp_agents.w.kind: "claude" is not a known kind`) {
		t.Errorf("err = %v", err)
	}
}

// TestLoadACPCaptureContent: capture_content reaches the agent, a preset's
// table too, and a value that is not a level is refused by name.
func TestLoadACPCaptureContent(t *testing.T) {
	c, err := LoadWith(writeConfig(t, "[acp_agents.codex-acp]\ncapture_content = \"full\"\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if a, err := c.ACPAgentNamed("codex-acp"); err != nil || a.CaptureContent != "full" || a.Command != "npx" {
		t.Errorf("%+v %v", a, err)
	}
	_, err = LoadWith(writeConfig(t, "[acp_agents.w]\ncommand = \"./w.sh\"\ncapture_content = \"all\"\n"), nil)
	if err == nil || !strings.Contains(err.Error(), `acp_agents.w.capture_content: "all" is not one of none, metadata, full`) {
		t.Errorf("err = %v", err)
	}
}

func TestLoadACPProfile(t *testing.T) {
	c, err := LoadWith(writeConfig(t, `[acp_agents.claude-agent-acp]
model = "haiku"
mode = "plan"
config = { effort = "high" }
append_system_prompt = "Be brief."
disallowed_tools = ["WebSearch"]
queue = "coalesce"
options = { maxTurns = 3 }
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := c.ACPAgentNamed("claude-agent-acp")
	if err != nil {
		t.Fatal(err)
	}
	if a.Command != "npx" || a.Model != "haiku" || a.Mode != "plan" || a.AppendSystemPrompt != "Be brief." ||
		a.QueuePolicy() != QueueCoalesce || a.Options["maxTurns"] != int64(3) || a.Config["effort"] != "high" {
		t.Errorf("profile: %+v", a)
	}
	for _, bad := range []struct{ toml, want string }{
		{"system_prompt = \"a\"\nappend_system_prompt = \"b\"", "not both"},
		{`queue = "later"`, `"later" is not a queue policy`},
		{`sandbox = "none"`, `"none" is not a sandbox level`},
		{`approval_policy = "sometimes"`, `"sometimes" is not an approval policy`},
		{`writable_roots = ["rel"]`, `"rel" is not an absolute path`},
	} {
		_, err := LoadWith(writeConfig(t, "[acp_agents.codex-acp]\n"+bad.toml+"\n"), nil)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v, want %q", bad.toml, err, bad.want)
		}
	}
	if (ACPProfile{}).QueuePolicy() != QueueWait {
		t.Error("the default queue policy is not queue")
	}
}
