package commands

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/protocol/acp/host/acptest"
	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/llm/llmtest"
	"github.com/openheim/openheim/runtime/session"
)

func TestPromptFlags(t *testing.T) {
	e := newTestEnv(t, fakeConfig)
	opts, err := parseCmd(t, e, "", newCmdPrompt, "-m", "m1", "-p", "fake", "-s", "abcd", "--fork",
		"--max-iterations", "3", "--allow-shell", "-C", "dir", "--timeout", "5s", "-f", "a.txt", "-f", "b.txt",
		"--json", "--record", "r.json", "--skills", "a,b", "--skills", " c ", "--deny-ask", "--agent", "codex", "say hi")
	if err != nil {
		t.Fatal(err)
	}
	want := PromptOptions{Text: "say hi", Files: []string{"a.txt", "b.txt"}, Model: "m1", Provider: "fake",
		SessionID: "abcd", Fork: true, MaxIterations: 3, AllowShell: true, WorkDir: "dir", Timeout: 5 * time.Second,
		JSON: true, Record: "r.json", Skills: []string{"a", "b", "c"}, DenyAsk: true, Agent: "codex"}
	got := *opts
	if got.IO != e.f.IOStreams || got.Config == nil || got.Sessions == nil || got.Runtime == nil {
		t.Errorf("dependencies not taken from the factory: %+v", got)
	}
	got.IO, got.Config, got.Sessions, got.Runtime = nil, nil, nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("options\n got %+v\nwant %+v", got, want)
	}

	// --skills "" means none (not nil: nil keeps the session's).
	opts, err = parseCmd(t, e, "", newCmdPrompt, "--skills", "", "hi")
	if err != nil || opts.Skills == nil || len(opts.Skills) != 0 {
		t.Errorf("--skills \"\": %#v, %v", opts, err)
	}
	opts, _ = parseCmd(t, e, "", newCmdPrompt, "hi")
	if opts.Skills != nil || opts.Continue || opts.JSON {
		t.Errorf("defaults: %+v", opts)
	}

	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"a", "b"}, "prompt: give the prompt as one quoted argument"},
		{[]string{"--continue", "--session", "x", "hi"}, "--session and --continue are mutually exclusive"},
		{[]string{"--fork", "hi"}, "--fork needs --session or --continue"},
		{[]string{"--max-iterations", "0", "hi"}, "--max-iterations must be at least 1"},
		{[]string{"--timeout=-1s", "hi"}, "--timeout must be positive"},
		{[]string{"--no-such-flag", "hi"}, "prompt: unknown flag --no-such-flag"},
	} {
		opts, err := parseCmd(t, e, "", newCmdPrompt, tc.args...)
		if opts != nil {
			t.Errorf("%v: the run function was called", tc.args)
		}
		wantExit(t, err, ExitUsage, tc.msg)
	}
}

// promptOpts are the options of `openheim prompt ARGS` in e.
func promptOpts(t *testing.T, e *testEnv, args ...string) *PromptOptions {
	return mustParse(t, e, "", newCmdPrompt, args...)
}

func TestPromptRunPlain(t *testing.T) {
	e := newTestEnv(t, fakeConfig)
	e.llm.Enqueue(llmtest.Reply{Text: []string{"Hello", ", world", "!"}})
	if err := promptRun(context.Background(), promptOpts(t, e, "Say hello")); err != nil {
		t.Fatal(err)
	}
	if e.out.String() != "Hello, world!\n" || e.errOut.String() != "" {
		t.Errorf("stdout %q, stderr %q", e.out, e.errOut)
	}
	list, err := e.sessions().Files.List()
	if err != nil || len(list) != 1 || deref(list[0].Title) != "Say hello" {
		t.Fatalf("sessions after one prompt: %+v, %v", list, err)
	}
	body, _ := json.Marshal(e.llm.Requests()[0].Body)
	if !strings.Contains(string(body), `"content":"Say hello"`) || !strings.Contains(string(body), `"name":"read_file"`) {
		t.Errorf("the request lacks the prompt or the tools: %s", body)
	}
}

func TestPromptRunJSON(t *testing.T) {
	e := newTestEnv(t, fakeConfig)
	e.llm.Enqueue(llmtest.Reply{Text: []string{"Hi"}, Usage: &llmtest.Usage{Prompt: 5, Completion: 1}})
	if err := promptRun(context.Background(), promptOpts(t, e, "--json", "Say hi")); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(e.out.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("want info, chunk, usage, result; got %d lines:\n%s", len(lines), e.out)
	}
	for i, want := range []string{`"sessionUpdate":"session_info_update","title":"Say hi"`, `"agent_message_chunk"`,
		`"usage_update","used":6`, `"stopReason":"end_turn"`} {
		if !strings.Contains(lines[i], want) {
			t.Errorf("line %d %s lacks %s", i+1, lines[i], want)
		}
	}
	if !strings.Contains(lines[0], `"model":"fake-model","provider":"fake"`) || !strings.Contains(lines[3], `"exitCode":0`) {
		t.Errorf("info %s / result %s", lines[0], lines[3])
	}
}

func TestPromptRunContinueAndFork(t *testing.T) {
	e := newTestEnv(t, fakeConfig)
	e.llm.Enqueue(llmtest.Reply{Text: []string{"one"}}, llmtest.Reply{Text: []string{"two"}}, llmtest.Reply{Text: []string{"three"}})
	ctx := context.Background()
	if err := promptRun(ctx, promptOpts(t, e, "first")); err != nil {
		t.Fatal(err)
	}
	if err := promptRun(ctx, promptOpts(t, e, "--continue", "second")); err != nil {
		t.Fatal(err)
	}
	s := e.sessions()
	list, _ := s.Files.List()
	if len(list) != 1 {
		t.Fatalf("--continue made a new session: %d sessions", len(list))
	}
	body, _ := json.Marshal(e.llm.Requests()[1].Body)
	if !strings.Contains(string(body), `"first"`) || !strings.Contains(string(body), `"one"`) {
		t.Errorf("the second turn does not carry the first: %s", body)
	}
	if err := promptRun(ctx, promptOpts(t, e, "--session", list[0].ID[:6], "--fork", "third")); err != nil {
		t.Fatal(err)
	}
	after, _ := s.Files.List()
	orig, _ := s.Files.Load(list[0].ID)
	if len(after) != 2 || len(orig.Messages) != 4 {
		t.Errorf("--fork: %d sessions, the original has %d messages (want 2 and 4)", len(after), len(orig.Messages))
	}
}

func TestPromptRunInput(t *testing.T) {
	e := newTestEnv(t, fakeConfig)
	e.llm.Enqueue(llmtest.Reply{Text: []string{"ok"}})
	notes := filepath.Join(e.work, "notes.txt")
	os.WriteFile(notes, []byte("buy milk\n"), 0o644)
	e.stdin("from stdin")
	if err := promptRun(context.Background(), promptOpts(t, e, "--file", notes, "-")); err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(e.llm.Requests()[0].Body)
	for _, want := range []string{"from stdin", `\u003cfile path=\"` + notes + `\"\u003e\nbuy milk\n\u003c/file\u003e`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("request lacks %s: %s", want, body)
		}
	}

	e.stdin("")
	wantExit(t, promptRun(context.Background(), promptOpts(t, e)), ExitUsage, "prompt: the prompt is empty")
	e.f.IOStreams.InTTY = true
	wantExit(t, promptRun(context.Background(), promptOpts(t, e)), ExitUsage, "prompt: no prompt given")
	e.f.IOStreams.InTTY = false
	os.WriteFile(notes, []byte{0, 1, 2}, 0o644)
	wantExit(t, promptRun(context.Background(), promptOpts(t, e, "--file", notes, "hi")), ExitUsage, "not a text file")
	wantExit(t, promptRun(context.Background(), promptOpts(t, e, "--file", notes+".none", "hi")), ExitUsage, "--file:")
}

func TestPromptRunErrors(t *testing.T) {
	e := newTestEnv(t, fakeConfig)
	ctx := context.Background()
	wantExit(t, promptRun(ctx, promptOpts(t, e, "--session", "nope", "hi")), ExitUsage, "prompt: --session")
	wantExit(t, promptRun(ctx, promptOpts(t, e, "--continue", "hi")), ExitUsage, "prompt: --continue: no earlier session in "+e.work)
	wantExit(t, promptRun(ctx, promptOpts(t, e, "--provider", "nope", "hi")), ExitUsage, "prompt: ")
	wantExit(t, promptRun(ctx, promptOpts(t, e, "-C", filepath.Join(e.work, "none"), "hi")), ExitUsage, "--work-dir: ")
	if len(e.llm.Requests()) != 0 {
		t.Errorf("a usage error reached the model")
	}

	// A session another process's turn holds: exit 1 with a hint.
	m := e.addSession("busy", "q", "a", time.Now())
	other := &session.Locker{Dir: e.sessions().Dir, Host: "elsewhere", PID: 4242}
	lease, err := other.Acquire(m.ID)
	if err != nil {
		t.Fatal(err)
	}
	err = promptRun(ctx, promptOpts(t, e, "--session", m.ID, "hi"))
	lease.Release()
	wantExit(t, err, ExitFailure, "prompt: ")
	if ee := err.(*ExitError); !strings.Contains(ee.Hint, "--fork") {
		t.Errorf("hint %q (%v)", ee.Hint, err)
	}

	// The provider refusing the key ends the turn with exit 1.
	e.llm.Enqueue(llmtest.Reply{Status: 401, ErrorBody: `{"error":{"message":"bad key"}}`})
	err = promptRun(ctx, promptOpts(t, e, "hi"))
	host := strings.TrimPrefix(strings.TrimSuffix(e.llm.URL(), "/v1"), "http://")
	wantExit(t, err, ExitFailure, "prompt: provider fake ("+host+", key none): HTTP 401")
	if hint := err.(*ExitError).Hint; hint != host+" refused the key: check api_key or env_var in [providers.fake]" {
		t.Errorf("hint %q", hint)
	}
}

func TestPromptRunStoppedEarly(t *testing.T) {
	e := newTestEnv(t, fakeConfig)
	os.WriteFile(filepath.Join(e.work, "a.txt"), []byte("A"), 0o644)
	e.llm.Enqueue(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path":"a.txt"}`}}})
	err := promptRun(context.Background(), promptOpts(t, e, "--max-iterations", "1", "read a.txt"))
	wantExit(t, err, ExitStopped, "prompt: the turn stopped early: max_turn_requests (1 model calls)")
	if ee := err.(*ExitError); !strings.HasPrefix(ee.Hint, "what was done is saved; continue with 'openheim prompt --session ") {
		t.Errorf("hint %q", ee.Hint)
	}
}

func TestPromptRunTimeout(t *testing.T) {
	e := newTestEnv(t, fakeConfig)
	e.llm.Enqueue(llmtest.Reply{Text: []string{"slow"}, Hang: true})
	wantExit(t, promptRun(context.Background(), promptOpts(t, e, "--timeout", "200ms", "hi")),
		ExitTimeout, "prompt: the turn was cancelled: --timeout expired")
}

// TestPromptRunAgentRuntime: the engine comes from opts.Runtime, which an
// external agent asks for without MCP servers (they are passed on to it);
// a session an agent ran continues on it without --agent.
func TestPromptRunAgentRuntime(t *testing.T) {
	e := newAgentEnv(t, acptest.Script{})
	native := e.addSession("mine", "q", "a", time.Now())
	var withMCPs []bool
	released := false
	runtime := func(ctx context.Context, cfg *config.Config, s *Sessions, withMCP bool) (*Runtime, func()) {
		withMCPs = append(withMCPs, withMCP)
		rt, release := e.f.Runtime(ctx, cfg, s, withMCP)
		return rt, func() { released = true; release() }
	}
	// A session openheim ran is not continued by an agent: a usage error,
	// before anything is started.
	opts := promptOpts(t, e, "--agent", "codex-acp", "--session", native.ID, "hi")
	opts.Runtime = runtime
	wantExit(t, promptRun(context.Background(), opts), ExitUsage, "was not run by an ACP agent, so --agent codex-acp cannot continue it")
	if withMCPs != nil {
		t.Errorf("a runtime was made for a refused turn: %v", withMCPs)
	}
	bound := e.agentSession("fake")
	opts = promptOpts(t, e, "--session", bound.ID, "hi again")
	opts.Runtime = runtime
	if err := promptRun(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(withMCPs, []bool{false}) || !released || !strings.Contains(e.out.String(), "hello from fake") {
		t.Errorf("runtime asked with MCP %v, released %v, out %q", withMCPs, released, e.out)
	}
}

func TestPromptRunDependencyErrors(t *testing.T) {
	e := newTestEnv(t, fakeConfig)
	opts := promptOpts(t, e, "hi")
	opts.Sessions = func() (*Sessions, error) { return nil, failure(os.ErrPermission) }
	wantExit(t, promptRun(context.Background(), opts), ExitFailure, "permission denied")
	opts.Config = func() (*config.Config, error) { return nil, usageErr(os.ErrNotExist, "") }
	wantExit(t, promptRun(context.Background(), opts), ExitUsage, "file does not exist")
}

// A prompt argument and piped input: the model gets both, the prompt first
// and the piped text delimited after it (git diff | openheim prompt ...).
func TestPromptRunPipedInputWithAPrompt(t *testing.T) {
	e := newTestEnv(t, fakeConfig)
	e.llm.Enqueue(llmtest.Reply{Text: []string{"ok"}}, llmtest.Reply{Text: []string{"ok"}})
	e.stdin("diff --git a/x b/x\n+new line\n")
	e.f.IOStreams.InPiped = true
	if err := promptRun(context.Background(), promptOpts(t, e, "review this diff")); err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(e.llm.Requests()[0].Body)
	if want := `review this diff\n\u003cstdin\u003e\ndiff --git a/x b/x\n+new line\n\u003c/stdin\u003e`; !strings.Contains(string(body), want) {
		t.Errorf("request lacks %s: %s", want, body)
	}
	// Nothing piped (an empty pipe): the prompt alone.
	e.stdin("")
	if err := promptRun(context.Background(), promptOpts(t, e, "just this")); err != nil {
		t.Fatal(err)
	}
	if body, _ := json.Marshal(e.llm.Requests()[1].Body); strings.Contains(string(body), "stdin") {
		t.Errorf("an empty pipe was attached: %s", body)
	}
	e.stdin("a\x00b")
	wantExit(t, promptRun(context.Background(), promptOpts(t, e, "hi")), ExitUsage, "prompt: stdin is not text")
	e.stdin(strings.Repeat("x", maxAttachment+1))
	wantExit(t, promptRun(context.Background(), promptOpts(t, e, "hi")), ExitUsage, "prompt: stdin is over the")
	// Not a pipe (a terminal, /dev/null): stdin is not read.
	e.f.IOStreams.InPiped = false
	e.stdin("never read")
	e.llm.Enqueue(llmtest.Reply{Text: []string{"ok"}})
	if err := promptRun(context.Background(), promptOpts(t, e, "alone")); err != nil {
		t.Fatal(err)
	}
	if body, _ := json.Marshal(e.llm.Requests()[2].Body); strings.Contains(string(body), "never read") {
		t.Errorf("stdin was read though it is not a pipe: %s", body)
	}
}

// -m provider/model picks the provider as chat's --model does; a model of
// another provider is a usage error naming it, before any request.
func TestPromptRunModelRefs(t *testing.T) {
	e := newTestEnv(t, `default_provider = "fake"
work_dir = "$WORK"
[providers.fake]
api_base = "$LLM"
models = ["fake-model", "fake-small"]
[providers.other]
api_base = "$LLM"
models = ["other-model"]
`)
	ctx := context.Background()
	e.llm.Enqueue(llmtest.Reply{Text: []string{"ok"}}, llmtest.Reply{Text: []string{"ok"}})
	if err := promptRun(ctx, promptOpts(t, e, "-m", "other/other-model", "hi")); err != nil {
		t.Fatal(err)
	}
	if err := promptRun(ctx, promptOpts(t, e, "-p", "fake", "-m", "fake/fake-small", "hi")); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"other-model", "fake-small"} {
		if got := e.llm.Requests()[i].Body["model"]; got != want {
			t.Errorf("request %d went to model %v, want %s", i+1, got, want)
		}
	}
	err := promptRun(ctx, promptOpts(t, e, "-m", "other-model", "hi"))
	wantExit(t, err, ExitUsage, `model "other-model" is not offered by provider "fake"`)
	if hint := err.(*ExitError).Hint; !strings.Contains(hint, "--provider other") || !strings.Contains(hint, "--model other/other-model") {
		t.Errorf("hint %q", hint)
	}
	wantExit(t, promptRun(ctx, promptOpts(t, e, "-p", "fake", "-m", "other/other-model", "hi")), ExitUsage, `names provider "other", --provider "fake"`)
	if len(e.llm.Requests()) != 2 {
		t.Errorf("a usage error reached the model")
	}
}
