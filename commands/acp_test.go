package commands

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/openheim/openheim/protocol/acp/host/acptest"
	"github.com/openheim/openheim/runtime/llm/llmtest"
)

// agentEnv, set to a config file, turns this test binary into `openheim
// --config FILE acp`: an ACP agent `acp agents --probe` can start.
const agentEnv = "OPENHEIM_COMMANDS_TEST_ACP"

func TestMain(m *testing.M) {
	acptest.MaybeRunFakeAgent() // the scripted fake agent (agent_session_test.go)
	if cfg := os.Getenv(agentEnv); cfg != "" {
		ios := System()
		err := NewRoot(ios, "test").Run(context.Background(), []string{"openheim", "--config", cfg, "acp"})
		if err != nil {
			PrintError(ios, err)
		}
		os.Exit(CodeOf(err))
	}
	os.Exit(m.Run())
}

// acpClient speaks line-delimited JSON-RPC to an agent.
type acpClient struct {
	t   *testing.T
	w   io.Writer
	r   *bufio.Scanner
	ids int
	// updates are the session/update notifications seen so far.
	updates []string
}

// call sends method and returns its result, keeping notifications.
func (c *acpClient) call(method string, params any) json.RawMessage {
	c.t.Helper()
	c.ids++
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.ids, "method": method, "params": params})
	fmt.Fprintf(c.w, "%s\n", req)
	for c.r.Scan() {
		var msg struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(c.r.Bytes(), &msg); err != nil {
			c.t.Fatalf("agent wrote %q: %v", c.r.Text(), err)
		}
		switch {
		case msg.Method == "session/update":
			c.updates = append(c.updates, c.r.Text())
		case msg.ID != nil && *msg.ID == c.ids && msg.Method == "":
			if msg.Error != nil {
				c.t.Fatalf("%s: %s", method, msg.Error)
			}
			return msg.Result
		}
	}
	c.t.Fatalf("%s: the agent closed stdout: %v", method, c.r.Err())
	return nil
}

// TestACPRun: the run function serves ACP on the command's streams, with
// the factory's engine running the turns, until stdin closes.
func TestACPRun(t *testing.T) {
	e := newTestEnv(t, fakeConfig)
	e.llm.Enqueue(llmtest.Reply{Text: []string{"Hello over ACP."}})
	toAgent, clientOut := io.Pipe()
	clientIn, fromAgent := io.Pipe()
	e.f.IOStreams.In, e.f.IOStreams.Out = toAgent, fromAgent
	done := make(chan error, 1)
	go func() {
		done <- acpRun(context.Background(), &ACPOptions{IO: e.f.IOStreams, Config: e.f.Config, Sessions: e.f.Sessions,
			Runtime: e.f.Runtime, Version: "test"})
		fromAgent.Close()
	}()
	c := &acpClient{t: t, w: clientOut, r: bufio.NewScanner(clientIn)}
	var init struct {
		AgentInfo struct{ Name, Version string } `json:"agentInfo"`
	}
	json.Unmarshal(c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}), &init)
	if init.AgentInfo.Name != "openheim" || init.AgentInfo.Version != "test" {
		t.Errorf("agentInfo %+v", init.AgentInfo)
	}
	var sess struct{ SessionID string }
	json.Unmarshal(c.call("session/new", map[string]any{"cwd": e.work, "mcpServers": []any{}}), &sess)
	var res struct{ StopReason string }
	json.Unmarshal(c.call("session/prompt", map[string]any{"sessionId": sess.SessionID,
		"prompt": []any{map[string]any{"type": "text", "text": "hi"}}}), &res)
	if res.StopReason != "end_turn" || !strings.Contains(strings.Join(c.updates, "\n"), `"text":"Hello over ACP."`) {
		t.Errorf("prompt: %+v, updates:\n%s", res, strings.Join(c.updates, "\n"))
	}
	clientOut.Close()
	waitDone(t, done, "acp after stdin closed")
	list, _ := e.sessions().Files.List()
	if len(list) != 1 || list[0].ID != sess.SessionID {
		t.Errorf("the ACP session is not stored: %+v", list)
	}
}

func TestACPAgentsFlags(t *testing.T) {
	e := newTestEnv(t, fakeConfig)
	opts, err := parseCmd(t, e, "acp", newCmdACPAgents, "--probe", "--json", "a", "b")
	if err != nil || !opts.Probe || !opts.Output.JSON || strings.Join(opts.Names, ",") != "a,b" || opts.Version != "test" {
		t.Errorf("%+v, %v", opts, err)
	}
	opts, _ = parseCmd(t, e, "acp", newCmdACPAgents)
	if opts.Names != nil || opts.Probe {
		t.Errorf("defaults: %+v", opts)
	}
	_, err = parseCmd(t, e, "", newCmdACP, "x")
	wantExit(t, err, ExitUsage, `acp: unknown command "x"`)
}

func TestACPAgentsRun(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	e := newTestEnv(t, fakeConfig+`[acp_agents.self]
command = "`+self+`"
args = ["-test.run=^$"]
[acp_agents.self.env]
`+agentEnv+` = "$CONFIG"
OPENHEIM_HOME = "$HOME"
[acp_agents.gone]
command = "$WORK/no-such-agent"
`)
	cfg, _ := os.ReadFile(e.cfgPath)
	os.WriteFile(e.cfgPath, []byte(strings.ReplaceAll(string(cfg), "$CONFIG", e.cfgPath)), 0o600)
	ctx := context.Background()
	opts := &ACPAgentsOptions{IO: e.f.IOStreams, Config: e.f.Config, Version: "test"}
	if err := acpAgentsRun(ctx, opts); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"NAME ", "\ncodex-acp ", "npx -y @zed-industries/codex-acp", "\ngone ", "\nopenheim ", "\nself "} {
		if !strings.Contains(e.out.String(), want) {
			t.Errorf("list lacks %q:\n%s", want, e.out)
		}
	}

	e.reset()
	opts.Names, opts.Probe = []string{"self", "gone"}, true
	if err := acpAgentsRun(ctx, opts); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(e.out.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], " openheim test (load") || !strings.Contains(lines[2], "error: ") {
		t.Errorf("probe:\n%s\nstderr: %s", e.out, e.errOut)
	}

	e.reset()
	opts.Names, opts.Probe, opts.Output = []string{"gone"}, false, jsonOutput{JSON: true}
	if err := acpAgentsRun(ctx, opts); err != nil || e.out.String() != `{"name":"gone","command":"`+e.work+`/no-such-agent","args":[]}`+"\n" {
		t.Errorf("--json: %q, %v", e.out, err)
	}
	opts.Names = []string{"nope"}
	wantExit(t, acpAgentsRun(ctx, opts), ExitUsage, "nope")
}

// TestACPAgentsRedacts: an agent's command line and what it says when it
// fails go out with the config's secrets masked, in the listing, the
// probe and `--json`.
func TestACPAgentsRedacts(t *testing.T) {
	const key = "sk-test-0123456789abcdef"
	e := newTestEnv(t, fakeConfig+`api_key = "`+key+`"
[acp_agents.leaky]
command = "sh"
args = ["-c", "echo 'refused key `+key+`' >&2; exit 3"]
`)
	ctx := context.Background()
	opts := &ACPAgentsOptions{IO: e.f.IOStreams, Config: e.f.Config, Version: "test", Names: []string{"leaky"}, Probe: true}
	for _, out := range []jsonOutput{{}, {JSON: true}} {
		e.reset()
		opts.Output = out
		if err := acpAgentsRun(ctx, opts); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(e.out.String(), key) || !strings.Contains(e.out.String(), "<redacted>") {
			t.Errorf("json=%v: %s", out.JSON, e.out)
		}
	}
}
