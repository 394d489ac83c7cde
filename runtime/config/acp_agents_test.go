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
		{ACPAgent{Command: "gemini", Args: []string{"--experimental-acp"}}, AgentKindOther},
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
