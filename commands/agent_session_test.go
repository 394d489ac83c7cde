package commands

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/protocol/acp/host/acptest"
	"github.com/openheim/openheim/runtime/session"
)

// newAgentEnv is a test env whose config has [acp_agents.fake]: the
// scripted fake agent as a process (this test binary, TestMain), which
// reopens sessions an earlier process made (LoadUnknown). extra is added
// to its table.
func newAgentEnv(t *testing.T, s acptest.Script, extra ...string) *testEnv {
	t.Helper()
	s.LoadUnknown = true
	cmd, args, env := acptest.Command(s)
	q := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	var envs []string
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if k == acptest.EnvVar || k == "GORACE" {
			envs = append(envs, q(k)+" = "+q(v))
		}
	}
	cfg := fakeConfig + fmt.Sprintf("[acp_agents.fake]\ncommand = %s\nargs = %s\nenv = { %s }\n%s\n",
		q(cmd), q(args), strings.Join(envs, ", "), strings.Join(extra, "\n"))
	return newTestEnv(t, cfg)
}

// agentSession stores a session bound to agent (as a turn would have).
func (e *testEnv) agentSession(agent string) session.Meta {
	e.t.Helper()
	m := e.addSession("agent's", "q", "a", time.Now())
	m.Provider, m.Model = session.Str("acp"), session.Str(agent)
	m.ACP = &session.ACPBinding{Agent: agent, SessionID: "fake-earlier-1", Cwd: e.work}
	if err := e.sessions().Store.SaveMeta(m); err != nil {
		e.t.Fatal(err)
	}
	return m
}

func (e *testEnv) sessionCount() int {
	e.t.Helper()
	all, err := e.sessions().Files.List()
	if err != nil {
		e.t.Fatal(err)
	}
	return len(all)
}

// TestPromptAgentLifecycle: a session an agent ran is listed with its
// agent, continued on it without --agent (--continue, --session), forked
// on the agent (session/fork) and removed there (session/delete).
func TestPromptAgentLifecycle(t *testing.T) {
	e := newAgentEnv(t, acptest.Script{})
	ctx := context.Background()
	if err := promptRun(ctx, promptOpts(t, e, "--agent", "fake", "first")); err != nil {
		t.Fatal(err)
	}
	e.reset()
	if err := sessionsLsRun(ctx, mustParse(t, e, "sessions", newCmdSessionsLs, "--json")); err != nil {
		t.Fatal(err)
	}
	var row sessionJSON
	json.Unmarshal([]byte(e.out.String()), &row)
	if row.Agent != "fake" || row.Messages != 2 {
		t.Fatalf("sessions ls --json: %s", e.out)
	}
	e.reset()
	sessionsLsRun(ctx, mustParse(t, e, "sessions", newCmdSessionsLs))
	if lines := strings.Split(e.out.String(), "\n"); !strings.Contains(lines[0], "AGENT") || !strings.Contains(lines[1], " fake ") {
		t.Errorf("sessions ls: %s", e.out)
	}

	// --continue without --agent: the same session, on the same agent.
	if err := promptRun(ctx, promptOpts(t, e, "--continue", "second")); err != nil {
		t.Fatal(err)
	}
	if conv, _ := e.sessions().Files.Load(row.ID); e.sessionCount() != 1 || len(conv.Messages) != 4 {
		t.Fatalf("after --continue: %d sessions, %d messages", e.sessionCount(), len(conv.Messages))
	}
	// --fork: on the agent; the copy is bound to the agent's fork.
	if err := promptRun(ctx, promptOpts(t, e, "--session", row.ID, "--fork", "third")); err != nil {
		t.Fatal(err)
	}
	orig, _ := e.sessions().Store.LoadMeta(row.ID)
	var fork *session.Meta
	all, _ := e.sessions().Files.List()
	for _, m := range all {
		if m.ID != row.ID {
			fork = &m
		}
	}
	if len(all) != 2 || fork == nil || fork.ACP == nil || fork.ACP.Agent != "fake" || fork.ACP.SessionID == orig.ACP.SessionID {
		t.Fatalf("after --fork: %+v", all)
	}
	e.reset()
	if err := sessionsRmRun(ctx, mustParse(t, e, "sessions", newCmdSessionsRm, fork.ID)); err != nil {
		t.Fatal(err)
	}
	if want := "(and fake's session " + fork.ACP.SessionID + ")"; !strings.Contains(e.out.String(), want) {
		t.Errorf("sessions rm: %q, want %q", e.out, want)
	}
}

// TestPromptAgentForkRefused: an agent without session/fork: exit 2, a
// clear error, no copy left behind (the orphan of before).
func TestPromptAgentForkRefused(t *testing.T) {
	caps := acptest.DefaultCapabilities()
	delete(caps["sessionCapabilities"].(map[string]any), "fork")
	e := newAgentEnv(t, acptest.Script{Capabilities: caps})
	m := e.agentSession("fake")
	wantExit(t, promptRun(context.Background(), promptOpts(t, e, "--agent", "fake", "--session", m.ID, "--fork", "x")),
		ExitUsage, "acp agent fake cannot fork its sessions")
	if n := e.sessionCount(); n != 1 {
		t.Errorf("%d sessions after a refused fork", n)
	}
	wantExit(t, sessionsForkRun(context.Background(), mustParse(t, e, "sessions", newCmdSessionsFork, m.ID)),
		ExitUsage, "cannot fork its sessions")
	wantExit(t, sessionsForkRun(context.Background(), mustParse(t, e, "sessions", newCmdSessionsFork, "--at", "1", m.ID)),
		ExitUsage, "forks a session whole")
	e.reset()
	// No session/delete either: openheim's side goes, the agent keeps its.
	caps = acptest.DefaultCapabilities()
	delete(caps["sessionCapabilities"].(map[string]any), "delete")
	e2 := newAgentEnv(t, acptest.Script{Capabilities: caps})
	m2 := e2.agentSession("fake")
	if err := sessionsRmRun(context.Background(), mustParse(t, e2, "sessions", newCmdSessionsRm, "--purge", m2.ID)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(e2.out.String(), "fake keeps its session fake-earlier-1") || e2.sessionCount() != 0 {
		t.Errorf("rm without delete: %q", e2.out)
	}
}

// TestPromptAgentModeAndModel: --mode and --model go to the agent's mode
// and model selector; what it lacks is a usage error.
func TestPromptAgentModeAndModel(t *testing.T) {
	e := newAgentEnv(t, acptest.Script{Settings: true})
	ctx := context.Background()
	if err := promptRun(ctx, promptOpts(t, e, "--agent", "fake", "--mode", "plan", "--model", "fake-small", "hi")); err != nil {
		t.Fatal(err)
	}
	wantExit(t, promptRun(ctx, promptOpts(t, e, "--agent", "fake", "--mode", "warp", "hi")), ExitUsage, "mode warp")
	wantExit(t, promptRun(ctx, promptOpts(t, e, "--agent", "fake", "--model", "nope", "hi")), ExitUsage, "nope")
	wantExit(t, promptRun(ctx, promptOpts(t, e, "--agent", "fake", "--provider", "fake", "hi")), ExitUsage, "--provider does not apply")
	wantExit(t, promptRun(ctx, promptOpts(t, e, "--mode", "warp", "hi")), ExitUsage, "openheim's modes are code and architect")
	if n := e.sessionCount(); n != 1 {
		t.Errorf("%d sessions; the refused turns must leave none", n)
	}
}

// TestACPSessionsRun: the agent's own sessions and login from the CLI;
// a call the agent does not offer is a usage error naming it.
func TestACPSessionsRun(t *testing.T) {
	e := newAgentEnv(t, acptest.Script{})
	ctx := context.Background()
	run := func(args ...string) error {
		var opts *ACPSessionsOptions
		if args[0] == "logout" {
			opts = mustParse(t, e, "acp", newCmdACPLogout, args[1:]...)
		} else {
			opts = mustParse(t, e, "acp", newCmdACPSessions, args...)
		}
		return acpSessionsRun(ctx, opts)
	}
	if err := run("ls", "fake"); err != nil || !strings.Contains(e.errOut.String(), "fake lists no sessions") {
		t.Errorf("ls: %v %q", err, e.errOut)
	}
	if err := run("close", "fake", "fake-a", "fake-b"); err != nil || e.out.String() != "closed fake-a\nclosed fake-b\n" {
		t.Errorf("close: %v %q", err, e.out)
	}
	e.reset()
	if err := run("rm", "fake", "fake-a"); err != nil || e.out.String() != "deleted fake-a\n" {
		t.Errorf("rm: %v %q", err, e.out)
	}
	e.reset()
	if err := run("logout", "fake"); err != nil || e.out.String() != "logged out of fake\n" {
		t.Errorf("logout: %v %q", err, e.out)
	}
	caps := acptest.DefaultCapabilities()
	delete(caps, "auth")
	delete(caps["sessionCapabilities"].(map[string]any), "list")
	e = newAgentEnv(t, acptest.Script{Capabilities: caps})
	wantExit(t, run("ls", "fake"), ExitUsage, "does not support session/list")
	wantExit(t, run("logout", "fake"), ExitUsage, "does not support logout")
	wantExit(t, run("ls", "nope"), ExitUsage, `no ACP agent "nope"`)
}
