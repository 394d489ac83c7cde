package commands

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/llm/llmtest"
)

const chatConfig = fakeConfig + `models = ["fake-model", "fake-big"]
`

func TestChatFlags(t *testing.T) {
	e := newTestEnv(t, chatConfig)
	opts, err := parseCmd(t, e, "", newCmdChat, "-s", "abcd", "-m", "fake/fake-big", "--skills", "go",
		"--allow-shell", "-C", "dir", "--json", "-k", "--deny-ask", "-a", "codex")
	if err != nil {
		t.Fatal(err)
	}
	got := *opts
	if got.IO != e.f.IOStreams || got.Config == nil || got.Sessions == nil || got.Runtime == nil || got.Home() != e.home || got.Version != "test" {
		t.Errorf("dependencies not taken from the factory: %+v", got)
	}
	got.IO, got.Config, got.Sessions, got.Runtime, got.Home = nil, nil, nil, nil, nil
	want := ChatOptions{Version: "test", SessionID: "abcd", Model: "fake/fake-big", Skills: []string{"go"}, AllowShell: true,
		WorkDir: "dir", JSON: true, KeepGoing: true, DenyAsk: true, Agent: "codex"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("options\n got %+v\nwant %+v", got, want)
	}
	_, err = parseCmd(t, e, "", newCmdChat, "hello")
	wantExit(t, err, ExitUsage, `chat: unexpected argument "hello"`)
	_, err = parseCmd(t, e, "", newCmdChat, "--continue", "--session", "x")
	wantExit(t, err, ExitUsage, "chat: --session and --continue are mutually exclusive")
}

// chatOpts are the options of `openheim chat ARGS` in e.
func chatOpts(t *testing.T, e *testEnv, args ...string) *ChatOptions {
	return mustParse(t, e, "", newCmdChat, args...)
}

// TestChatRunScript: stdin that is not a terminal is a script; answers and
// slash command output on stdout, a blank line between steps.
func TestChatRunScript(t *testing.T) {
	e := newTestEnv(t, chatConfig)
	e.llm.Enqueue(llmtest.Reply{Text: []string{"Hello."}}, llmtest.Reply{Text: []string{"Bigger."}})
	e.stdin("# a comment\nhi\n/model fake-big\n/thinking off\nagain\n")
	if err := chatRun(context.Background(), chatOpts(t, e)); err != nil {
		t.Fatalf("%v; stderr %s", err, e.errOut)
	}
	want := "Hello.\n\nmodel: fake/fake-big\n\nthinking: hidden\n\nBigger.\n"
	if e.out.String() != want {
		t.Errorf("stdout %q, want %q", e.out, want)
	}
	reqs := e.llm.Requests()
	if len(reqs) != 2 || reqs[1].Body["model"] != "fake-big" {
		t.Fatalf("requests: %d, second model %v", len(reqs), reqs[len(reqs)-1].Body["model"])
	}
	list, _ := e.sessions().Files.List()
	if len(list) != 1 {
		t.Errorf("one chat, %d sessions", len(list))
	}
}

// TestChatRunScriptJSON: --json prints prompt's NDJSON for each turn;
// slash command output goes to stderr; --continue resumes the latest.
func TestChatRunScriptJSON(t *testing.T) {
	e := newTestEnv(t, chatConfig)
	m := e.addSession("earlier", "q", "a", time.Now())
	e.llm.Enqueue(llmtest.Reply{Text: []string{"One."}})
	e.stdin("/mode architect\nnext\n")
	if err := chatRun(context.Background(), chatOpts(t, e, "--continue", "--json")); err != nil {
		t.Fatal(err)
	}
	if e.errOut.String() != "mode: architect\n" {
		t.Errorf("stderr %q", e.errOut)
	}
	lines := strings.Split(strings.TrimSpace(e.out.String()), "\n")
	var first, last map[string]any
	json.Unmarshal([]byte(lines[0]), &first)
	json.Unmarshal([]byte(lines[len(lines)-1]), &last)
	if first["sessionId"] != m.ID || last["stopReason"] != "end_turn" {
		t.Errorf("NDJSON does not continue %s or end the turn:\n%s", m.ID, e.out)
	}
	body, _ := json.Marshal(e.llm.Requests()[0].Body)
	if strings.Contains(string(body), `"name":"write_file"`) {
		t.Errorf("architect mode offered write_file")
	}
}

// TestChatRunScriptFailures: the first failing step sets the exit code (a
// slash command mistake is a usage error); --keep-going runs the rest.
func TestChatRunScriptFailures(t *testing.T) {
	e := newTestEnv(t, chatConfig)
	e.stdin("/modl\nhi\n")
	err := chatRun(context.Background(), chatOpts(t, e))
	wantExit(t, err, ExitUsage, "chat: line 1: unknown command /modl")
	if !err.(*ExitError).Silent || !strings.Contains(e.errOut.String(), "openheim: line 1: unknown command /modl (did you mean /model?") {
		t.Errorf("the failure is not reported once on stderr: %q", e.errOut)
	}
	if len(e.llm.Requests()) != 0 {
		t.Error("the script went on after a failure")
	}

	e.reset()
	e.llm.Enqueue(llmtest.Reply{Status: 401, ErrorBody: `{"error":{"message":"bad key"}}`}, llmtest.Reply{Text: []string{"two"}})
	e.stdin("one\ntwo\n")
	err = chatRun(context.Background(), chatOpts(t, e, "--keep-going"))
	wantExit(t, err, ExitFailure, "chat: line 1: provider fake (")
	if !strings.HasSuffix(e.out.String(), "two\n") {
		t.Errorf("--keep-going did not run line 2: %q", e.out)
	}
}

func TestChatRunStartErrors(t *testing.T) {
	e := newTestEnv(t, chatConfig)
	wantExit(t, chatRun(context.Background(), chatOpts(t, e, "--model", "nope/none")), ExitUsage, "chat: --model: ")
	wantExit(t, chatRun(context.Background(), chatOpts(t, e, "--agent", "no-such-agent")), ExitUsage, "chat: --agent: ")
	wantExit(t, chatRun(context.Background(), chatOpts(t, e, "--session", "nope")), ExitUsage, "chat: --session: ")

	noModel := newTestEnv(t, `work_dir = "$WORK"`)
	wantExit(t, chatRun(context.Background(), chatOpts(t, noModel)), ExitUsage, "chat: ")

	// The runtime is asked for only once the chat can start, with MCP
	// unless an external agent runs the turns.
	asked := 0
	opts := chatOpts(t, e)
	opts.Runtime = func(ctx context.Context, cfg *config.Config, s *Sessions, withMCP bool) (*Runtime, func()) {
		asked++
		if !withMCP {
			t.Error("the engine's own turns get no MCP servers")
		}
		return e.f.Runtime(ctx, cfg, s, withMCP)
	}
	opts.Model = "nope/none"
	chatRun(context.Background(), opts)
	opts.Model = ""
	e.stdin("")
	if err := chatRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if asked != 1 {
		t.Errorf("runtime assembled %d times, want 1", asked)
	}
}
