//go:build unix

package host

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/protocol/acp/host/acptest"
	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/permission"
	"github.com/openheim/openheim/runtime/session"
)

// promptText runs one turn of r (input "go") under gate and returns its
// meta, how it ended and the text the agent streamed; a turn that could
// not run or ended with an error fails the test.
func promptText(t *testing.T, r *Runner, gate engine.Gate) (session.Meta, event.End, string) {
	t.Helper()
	var mu sync.Mutex
	var text strings.Builder
	meta, end, err := r.Prompt(context.Background(), engine.Request{Input: []message.Block{message.Text("go")}, Gate: gate,
		Sink: event.SinkFunc(func(ev event.Event) {
			if ev.Kind == event.AgentMessageChunk {
				mu.Lock()
				text.WriteString(ev.Content.Text)
				mu.Unlock()
			}
		})})
	if err != nil || end.Err != nil {
		t.Fatalf("prompt: %v %v", err, end.Err)
	}
	mu.Lock()
	defer mu.Unlock()
	return meta, end, text.String()
}

// fakeRunner is a Runner on the scripted fake agent, in-process or
// as a real process, with cfg's work_dir, allow_shell and permissions.
func fakeRunner(t *testing.T, s acptest.Script, cfg *config.Config, process bool) (*Runner, *acptest.Recorder) {
	t.Helper()
	store, err := session.NewFileStore(filepath.Join(t.TempDir(), "history"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.ACPAgents = map[string]*config.ACPAgent{"fake": {Command: "unused"}}
	r := &Runner{Engine: &engine.Engine{Config: cfg, Store: store}, Agent: "fake"}
	rec := &acptest.Recorder{}
	if process {
		cmd, args, env := acptest.Command(s)
		cfg.ACPAgents["fake"] = &config.ACPAgent{Command: cmd, Args: args, Env: envMap(env)}
	} else {
		s.Recorder = rec
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		r.transport = func() *Transport {
			toAgentR, toAgentW := io.Pipe()
			fromAgentR, fromAgentW := io.Pipe()
			go acptest.Serve(ctx, s, toAgentR, fromAgentW)
			return &Transport{Stdin: toAgentW, Stdout: fromAgentR}
		}
	}
	t.Cleanup(func() { r.Close() })
	return r, rec
}

// runTurn prompts once and returns what the agent said (the fake echoes
// the outcome of each of its requests).
func runTurn(t *testing.T, r *Runner, asker permission.Asker) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var text strings.Builder
	meta, end, err := r.Prompt(ctx, engine.Request{Input: []message.Block{message.Text("go")}, Gate: engine.Asking(asker)})
	if err != nil || end.Err != nil {
		t.Fatalf("prompt: %v %v", err, end.Err)
	}
	conv, err := r.Engine.Store.Load(meta.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range conv.Messages {
		if m.Role == message.RoleAssistant {
			text.WriteString(m.JoinText())
		}
	}
	return text.String()
}

func askParams(toolCall string) *json.RawMessage {
	raw := json.RawMessage(`{"toolCall":` + toolCall + `,"options":[{"optionId":"allow-once","name":"Allow","kind":"allow_once"},` +
		`{"optionId":"allow-always","name":"Always","kind":"allow_always"},{"optionId":"reject-once","name":"Reject","kind":"reject_once"}]}`)
	return &raw
}

func jsonStr(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestGateJudgesWhatRequestsTouch: the host's gate judges an external
// agent's permission request by the paths and command it carries, not by
// its kind, through the config's one permission gate, with the fake agent
// in-process and as a real process.
func TestGateJudgesWhatRequestsTouch(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	work, outside := filepath.Join(base, "work"), filepath.Join(base, "outside")
	os.MkdirAll(work, 0o755)
	os.MkdirAll(outside, 0o755)
	os.Symlink(outside, filepath.Join(work, "link"))
	in, out := jsonStr(filepath.Join(work, "in.txt")), jsonStr(filepath.Join(outside, "x.txt"))
	codexLs := `{"call_id":"c1","command":["/bin/bash","-lc","ls"],"cwd":` + jsonStr(work) + `,"parsed_cmd":[{"type":"list_files","cmd":"ls","path":null}]}`
	tests := []struct {
		name     string
		toolCall string
		shell    bool
		perms    config.Permissions
		asker    permission.Asker
		want     string
	}{
		{"inside edit is asked and allowed (prompt)", `{"toolCallId":"t","kind":"edit","rawInput":{"file_path":` + in + `}}`, false, config.Permissions{}, nil, "allow-once"},
		{"outside locations path refused", `{"toolCallId":"t","kind":"read","locations":[{"path":"/etc/hostname"}]}`, false, config.Permissions{}, nil, "reject-once"},
		{"outside rawInput file_path refused", `{"toolCallId":"t","kind":"edit","rawInput":{"file_path":` + out + `}}`, false, config.Permissions{}, nil, "reject-once"},
		{"outside even with an allow rule", `{"toolCallId":"t","kind":"read","rawInput":{"file_path":` + out + `}}`, false, config.Permissions{Allow: []string{"*"}}, nil, "reject-once"},
		{"allow_outside lets it through", `{"toolCallId":"t","kind":"read","rawInput":{"file_path":` + out + `}}`, false, config.Permissions{AllowOutside: []string{outside + "/**"}}, nil, "allow-once"},
		{"a link inside that leads out refused", `{"toolCallId":"t","kind":"read","rawInput":{"path":"link/x.txt"}}`, false, config.Permissions{}, nil, "reject-once"},
		{"a diff's path outside refused", `{"toolCallId":"t","kind":"edit","content":[{"type":"diff","path":` + out + `,"newText":"x"}]}`, false, config.Permissions{}, nil, "reject-once"},
		{"Codex apply_patch changes outside refused", `{"toolCallId":"t","kind":"edit","rawInput":{"changes":{` + out + `:{"type":"add","content":"x"}}}}`, false, config.Permissions{}, nil, "reject-once"},
		{"command labelled search without allow_shell refused", `{"toolCallId":"t","kind":"search","rawInput":` + codexLs + `}`, false, config.Permissions{}, nil, "reject-once"},
		{"command labelled search, allow search is no shell", `{"toolCallId":"t","kind":"search","rawInput":` + codexLs + `}`, false, config.Permissions{Allow: []string{"search"}}, nil, "reject-once"},
		{"command labelled search, deny execute", `{"toolCallId":"t","kind":"search","rawInput":` + codexLs + `}`, true, config.Permissions{Deny: []string{"execute"}}, nil, "reject-once"},
		{"command labelled search, allow_shell and allow execute", `{"toolCallId":"t","kind":"search","rawInput":` + codexLs + `}`, true, config.Permissions{Allow: []string{"execute"}}, permission.DenyAsker, "allow-once"},
		{"command labelled search, an allow rule without allow_shell", `{"toolCallId":"t","kind":"search","rawInput":{"command":"ls"}}`, false, config.Permissions{Allow: []string{"execute"}}, nil, "allow-once"},
		{"a terminal block is a command", `{"toolCallId":"t","kind":"read","content":[{"type":"terminal","terminalId":"x"}]}`, false, config.Permissions{}, nil, "reject-once"},
		{"--deny-ask denies an ask", `{"toolCallId":"t","kind":"edit","rawInput":{"file_path":` + in + `}}`, false, config.Permissions{}, permission.DenyAsker, "reject-once"},
		{"--deny-ask denies a command that would be asked", `{"toolCallId":"t","kind":"search","rawInput":{"command":"ls"}}`, true, config.Permissions{}, permission.DenyAsker, "reject-once"},
	}
	for _, mode := range []string{"in-process", "process"} {
		for _, tt := range tests {
			t.Run(mode+"/"+tt.name, func(t *testing.T) {
				cfg := &config.Config{WorkDir: work, AllowShell: tt.shell, Permissions: tt.perms}
				r, _ := fakeRunner(t, acptest.Script{AskPermission: askParams(tt.toolCall)}, cfg, mode == "process")
				if got := runTurn(t, r, tt.asker); !strings.Contains(got, "permission: "+tt.want) {
					t.Errorf("the agent was told %q, want %s", got, tt.want)
				}
			})
		}
	}
}

// TestTerminalsNeedAllowShell: without allow_shell the host does not
// offer terminals and refuses terminal/create (nothing runs); with it, the
// command passes the gate as execute: allowed by prompt's default, refused
// by deny = ["execute"] and by --deny-ask.
func TestTerminalsNeedAllowShell(t *testing.T) {
	for _, mode := range []string{"in-process", "process"} {
		t.Run(mode, func(t *testing.T) {
			work := t.TempDir()
			marker := filepath.Join(work, "ran")
			script := acptest.Script{Terminal: []string{"sh", "-c", "touch " + marker + "; echo term-out"}}
			run := func(shell bool, perms config.Permissions, asker permission.Asker) (string, *acptest.Recorder) {
				os.Remove(marker)
				r, rec := fakeRunner(t, script, &config.Config{WorkDir: work, AllowShell: shell, Permissions: perms}, mode == "process")
				return runTurn(t, r, asker), rec
			}
			got, rec := run(false, config.Permissions{}, nil)
			if !strings.Contains(got, "terminal error: create:") || !strings.Contains(got, "-32601") || !strings.Contains(got, "allow_shell is off") {
				t.Errorf("without allow_shell the agent was told %q", got)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Error("the command ran without allow_shell")
			}
			if mode == "in-process" {
				init := rec.Method(acp.MethodInitialize)
				var p struct {
					ClientCapabilities acp.ClientCapabilities `json:"clientCapabilities"`
				}
				if len(init) != 1 || json.Unmarshal(init[0].Params, &p) != nil || p.ClientCapabilities.Terminal {
					t.Errorf("terminals offered without allow_shell: %+v", init)
				}
			}
			if got, _ := run(true, config.Permissions{}, nil); !strings.Contains(got, "terminal: term-out") {
				t.Errorf("with allow_shell the agent was told %q", got)
			}
			if _, err := os.Stat(marker); err != nil {
				t.Error("the command did not run with allow_shell")
			}
			for name, c := range map[string]struct {
				perms config.Permissions
				asker permission.Asker
			}{"deny execute": {config.Permissions{Deny: []string{"execute"}}, nil}, "--deny-ask": {config.Permissions{}, permission.DenyAsker}} {
				got, _ := run(true, c.perms, c.asker)
				if !strings.Contains(got, "terminal error: create:") || !strings.Contains(got, "refused") {
					t.Errorf("%s: the agent was told %q", name, got)
				}
				if _, err := os.Stat(marker); err == nil {
					t.Errorf("%s: the command ran", name)
				}
			}
		})
	}
}

// TestTerminalCwdOutsideRefused: terminal/create's cwd is judged against
// the work directory by the same gate, allow rule or not.
func TestTerminalCwdOutsideRefused(t *testing.T) {
	work, outside := t.TempDir(), t.TempDir()
	cfg := &config.Config{WorkDir: work, AllowShell: true, Permissions: config.Permissions{Allow: []string{"execute"}}}
	r := &Runner{Engine: &engine.Engine{Config: cfg}}
	h, _ := inProcess(t, acptest.Script{}, Options{WorkDir: work, AllowShell: true, Permission: r.gate(r.Engine.Permit("s", engine.Gate{}), work, work)})
	create := func(cwd string) error {
		params, _ := json.Marshal(map[string]any{"sessionId": "s", "command": "sh", "args": []string{"-c", "touch ran"}, "cwd": cwd})
		res, err := h.Request(context.Background(), "terminal/create", params)
		if err == nil {
			var id struct{ TerminalID string }
			b, _ := json.Marshal(res)
			json.Unmarshal(b, &id)
			h.Request(context.Background(), "terminal/wait_for_exit", json.RawMessage(`{"sessionId":"s","terminalId":"`+id.TerminalID+`"}`))
		}
		return err
	}
	if err := create(outside); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("cwd outside: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "ran")); err == nil {
		t.Error("a command ran outside the work directory")
	}
	if err := create(work); err != nil {
		t.Errorf("cwd inside: %v", err)
	}
	if _, err := os.Stat(filepath.Join(work, "ran")); err != nil {
		t.Error("the allowed command did not run")
	}
}
