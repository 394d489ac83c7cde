package commands

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/protocol/acp/host/acptest"
	"github.com/openheim/openheim/runtime/message"
)

// TestChatAgentSettings: in a chat with an agent, /mode, /model and
// /config drive the agent's modes, model selector and options; /help
// lists its commands, which run as prompts.
func TestChatAgentSettings(t *testing.T) {
	e := newAgentEnv(t, acptest.Script{Settings: true})
	e.stdin("/mode plan\nhello\n/mode\n/model fake-small\n/model\n/config effort high\n/config\n/help\n/review the diff\n/config colour red\n")
	err := chatRun(context.Background(), chatOpts(t, e, "--agent", "fake", "--keep-going"))
	out := e.out.String()
	for _, want := range []string{
		"mode plan: asked of fake's session when it starts",
		"* plan", "* fake-small",
		"effort  high", // /config lists the option with its value
		"fake's commands", "/review [what to review]", "Review the changes",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// Only the unknown option failed (exit 2, --keep-going ran the rest).
	wantExit(t, err, ExitUsage, `no option "colour"`)
	all, _ := e.sessions().Files.List()
	if len(all) != 1 {
		t.Fatalf("%d sessions", len(all))
	}
	conv, _ := e.sessions().Files.Load(all[0].ID)
	var users []string
	for _, m := range conv.Messages {
		if m.Role == message.RoleUser {
			users = append(users, m.JoinText())
		}
	}
	if strings.Join(users, "|") != "hello|/review the diff" {
		t.Errorf("prompts the agent got: %q", users)
	}
}

// TestChatContinuesAgentSession: chat --continue of an agent's session
// runs on the agent without --agent; chat's own /config refuses without
// an agent.
func TestChatContinuesAgentSession(t *testing.T) {
	e := newAgentEnv(t, acptest.Script{})
	m := e.agentSession("fake")
	e.stdin("again\n")
	if err := chatRun(context.Background(), chatOpts(t, e, "--continue")); err != nil {
		t.Fatalf("%v; stderr %s", err, e.errOut)
	}
	if !strings.Contains(e.out.String(), "hello from fake") {
		t.Errorf("output: %q", e.out)
	}
	if conv, _ := e.sessions().Files.Load(m.ID); len(conv.Messages) != 4 {
		t.Errorf("the session has %d messages", len(conv.Messages))
	}
	e.reset()
	native := e.addSession("mine", "q", "a", time.Now().Add(-time.Hour))
	e.stdin("/config\n")
	wantExit(t, chatRun(context.Background(), chatOpts(t, e, "--session", native.ID)), ExitUsage, "/config sets an external agent's options")
	wantExit(t, chatRun(context.Background(), chatOpts(t, e, "--session", native.ID, "--agent", "fake")), ExitUsage, "was not run by an ACP agent")
}
