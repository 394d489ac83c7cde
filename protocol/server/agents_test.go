package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openheim/openheim/protocol/acp/host/acptest"
)

func TestMain(m *testing.M) {
	acptest.MaybeRunFakeAgent() // [acp_agents.fake] of these tests
	os.Exit(m.Run())
}

// fakeAgentTOML is [acp_agents.NAME]: the scripted fake agent as a process.
func fakeAgentTOML(name string, s acptest.Script) string {
	cmd, args, env := acptest.Command(s)
	q := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	var envs []string
	for _, kv := range env {
		if k, v, _ := strings.Cut(kv, "="); k == acptest.EnvVar || k == "GORACE" {
			envs = append(envs, q(k)+" = "+q(v))
		}
	}
	return fmt.Sprintf("[acp_agents.%s]\ncommand = %s\nargs = %s\nenv = { %s }\n", name, q(cmd), q(args), strings.Join(envs, ", "))
}

// editPermission makes the fake ask before an edit, which openheim's rules
// say to ask the user about.
func editPermission() *json.RawMessage {
	raw := json.RawMessage(`{"toolCall":{"toolCallId":"fake-edit-1","title":"Edit notes.md","kind":"edit","status":"pending"},` +
		`"options":[{"optionId":"allow-once","name":"Allow","kind":"allow_once"},{"optionId":"reject-once","name":"Reject","kind":"reject_once"}]}`)
	return &raw
}

// TestWSDrivesExternalAgent: over /ws, a client makes a session bound to
// an external agent (session/new _meta.agent), sees and changes the
// agent's modes and options, prompts it with openheim's permission dialog
// (the question comes to the client), and a second client watching the
// session sees the turn; the session is in openheim's history.
func TestWSDrivesExternalAgent(t *testing.T) {
	// Kind claude-agent-acp: its projection, whose unsafe mode
	// (bypassPermissions) is refused.
	f := start(t, setup{extra: fakeAgentTOML("fake", acptest.Script{Settings: true, AskPermission: editPermission()}) +
		"kind = \"claude-agent-acp\"\n"})
	c := f.mustDial(t, "/ws")
	c.next()
	init, _ := c.agentCall(0, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	if agents, _ := at(init, "data.result._meta.acp_agents").([]any); !strings.Contains(fmt.Sprint(agents), "fake") {
		t.Fatalf("initialize lists agents %v", agents)
	}
	r, _ := c.agentCall(1, "session/new", map[string]any{"cwd": f.work, "mcpServers": []any{}, "_meta": map[string]any{"agent": "fake"}})
	id, _ := at(r, "data.result.sessionId").(string)
	expect(t, "session/new", r, map[string]any{"data.result.modes.currentModeId": "default", "data.result.configOptions.2.id": "effort"})
	r, _ = c.agentCall(2, "session/set_mode", map[string]any{"sessionId": id, "modeId": "plan"})
	expect(t, "set_mode", r, map[string]any{"data.error": absent})
	r, _ = c.agentCall(3, "session/set_config_option", map[string]any{"sessionId": id, "configId": "model", "value": "fake-small"})
	expect(t, "set_config_option", r, map[string]any{"data.result.configOptions.1.currentValue": "fake-small"})
	r, _ = c.agentCall(4, "session/set_mode", map[string]any{"sessionId": id, "modeId": "bypassPermissions"})
	if msg, _ := at(r, "data.error.data").(string); !strings.Contains(msg, "without asking") {
		t.Errorf("an unsafe mode: %v", r)
	}
	if r, _ = c.agentCall(5, "session/set_mode", map[string]any{"sessionId": id, "modeId": "warp"}); at(r, "data.error.code") != float64(-32602) {
		t.Errorf("an unknown mode: %v", r)
	}

	w := f.mustDial(t, "/ws")
	w.next()
	w.agentCall(0, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	r, _ = w.agentCall(1, "session/load", map[string]any{"sessionId": id, "cwd": f.work, "mcpServers": []any{}})
	expect(t, "load", r, map[string]any{"data.result.modes.currentModeId": "plan"})

	c.send("agent", map[string]any{"jsonrpc": "2.0", "id": 6, "method": "session/prompt", "params": prompt(id, "edit notes.md")})
	ask, _ := c.until(func(m map[string]any) bool { return at(m, "data.method") == "session/request_permission" })
	if at(ask, "data.params.toolCall.toolCallId") != "fake-edit-1" {
		t.Fatalf("permission question: %v", ask)
	}
	c.send("agent", map[string]any{"jsonrpc": "2.0", "id": at(ask, "data.id"),
		"result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "allow_once"}}})
	res, before := c.until(response(6))
	expect(t, "prompt", res, map[string]any{"data.result.stopReason": "end_turn"})
	if !strings.Contains(fmt.Sprint(before), "permission: allow-once") {
		t.Errorf("the agent did not get the user's answer: %v", before)
	}
	w.until(func(m map[string]any) bool { return at(m, "data.params.update.content.text") == "hello from fake" })

	code, body := f.get(t, "/api/sessions/"+id, nil)
	if code != 200 || !strings.Contains(string(body), "edit notes.md") || !strings.Contains(string(body), "hello from fake") {
		t.Errorf("history: %d %s", code, body)
	}
}

// TestSessionsAPIDrivesExternalAgent: an agent profile naming an ACP agent
// (acp_agent) makes sessions API sessions that run on it: the turn
// streams over SSE and lands in the history; a fork forks on the agent.
func TestSessionsAPIDrivesExternalAgent(t *testing.T) {
	f := start(t, setup{extra: fakeAgentTOML("fake", acptest.Script{})})
	agents := filepath.Join(filepath.Dir(f.work), "agents")
	os.MkdirAll(agents, 0o755)
	os.WriteFile(filepath.Join(agents, "outsider.md"), []byte("---\ndescription: runs elsewhere\nacp_agent: fake\n---\nBe brief.\n"), 0o644)
	code, body := f.do(t, http.MethodPost, "/v1/sessions", "application/json",
		strings.NewReader(`{"agent_id":"ag_profile_outsider","initial_items":[{"type":"message","role":"user","content":"hi agent"}]}`), f.authed(nil))
	if code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	var snap struct {
		ID string `json:"id"`
	}
	json.Unmarshal(body, &snap)
	id := strings.TrimPrefix(snap.ID, "conv_")
	waitFor(t, func() bool {
		conv, err := f.store.Load(id)
		return err == nil && len(conv.Messages) >= 2 && f.srv.Hub().Running() == 0
	})
	meta, _ := f.store.LoadMeta(id)
	if meta.ACP == nil || meta.ACP.Agent != "fake" || meta.ACP.SessionID == "" {
		t.Fatalf("binding: %+v", meta.ACP)
	}
	conv, _ := f.store.Load(id)
	if got := conv.Messages[len(conv.Messages)-1].JoinText(); !strings.Contains(got, "hello from fake") {
		t.Errorf("answer %q", got)
	}
	code, body = f.do(t, http.MethodPost, "/v1/sessions/conv_"+id+"/fork", "application/json", strings.NewReader(`{}`), f.authed(nil))
	json.Unmarshal(body, &snap)
	forked, err := f.store.LoadMeta(strings.TrimPrefix(snap.ID, "conv_"))
	if code != 201 || err != nil || forked.ACP == nil || forked.ACP.SessionID == "" || forked.ACP.SessionID == meta.ACP.SessionID {
		t.Errorf("fork: %d %s %+v", code, body, forked)
	}
}
