package host

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/protocol/acp/host/acptest"
	"github.com/openheim/openheim/runtime/event"
)

func TestMain(m *testing.M) {
	acptest.MaybeRunFakeAgent()
	os.Exit(m.Run())
}

// inProcess starts a host on an in-process fake agent running s.
func inProcess(t *testing.T, s acptest.Script, opts Options) (*Host, *acptest.Recorder) {
	t.Helper()
	rec := &acptest.Recorder{}
	s.Recorder = rec
	toAgentR, toAgentW := io.Pipe()
	fromAgentR, fromAgentW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	go acptest.Serve(ctx, s, toAgentR, fromAgentW)
	if opts.WorkDir == "" {
		opts.WorkDir = t.TempDir()
	}
	opts.ClientInfo = acp.Implementation{Name: "openheim", Version: "test"}
	opts.Transport = &Transport{Stdin: toAgentW, Stdout: fromAgentR}
	h, err := Start(context.Background(), AgentSpec{Name: "fake"}, opts)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(); cancel() })
	return h, rec
}

// collect drains a turn: its events and how it ended.
func collect(t *testing.T, turn *TurnHandle) ([]event.Event, TurnResult) {
	t.Helper()
	var evs []event.Event
	timeout := time.After(20 * time.Second)
	for {
		select {
		case ev, ok := <-turn.Events:
			if !ok {
				return evs, <-turn.Completion
			}
			evs = append(evs, ev)
		case <-timeout:
			t.Fatal("the turn did not end")
		}
	}
}

func textOf(evs []event.Event) string {
	var b strings.Builder
	for _, e := range evs {
		if e.Kind == event.AgentMessageChunk && e.Content != nil {
			b.WriteString(e.Content.Text)
		}
	}
	return b.String()
}

// TestHostSessions drives the fake agent through every session method,
// with garbage and unknown update kinds on the wire.
func TestHostSessions(t *testing.T) {
	tool := json.RawMessage(`{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Read x","kind":"read","status":"pending","rawInput":{"p":1}}`)
	unknown := json.RawMessage(`{"sessionUpdate":"fake_future_kind","x":1}`)
	h, rec := inProcess(t, acptest.Script{Garbage: acptest.GarbageLines,
		Updates: []json.RawMessage{acptest.TextChunk("one "), unknown, tool, acptest.TextChunk("two")}}, Options{})
	if ai := h.Info().AgentInfo; ai == nil || ai.Name != acptest.AgentName {
		t.Fatalf("agentInfo: %+v", h.Info())
	}
	mcp := json.RawMessage(`{"name":"fs","command":"mcp-fs","args":[],"env":[]}`)
	id, err := h.NewSession(context.Background(), SessionOptions{Cwd: "/w", MCPServers: []json.RawMessage{mcp}, AppendSystemPrompt: "Be brief."})
	if err != nil {
		t.Fatal(err)
	}
	sent := rec.Method(acp.MethodSessionNew)[0].Params
	if !strings.Contains(string(sent), `"mcpServers":[{"name":"fs"`) || !strings.Contains(string(sent), `"appendSystemPrompt":"Be brief."`) {
		t.Errorf("session/new params: %s", sent)
	}
	turn, err := h.Prompt(context.Background(), id, []acp.ContentBlock{{Type: "text", Text: "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	evs, res := collect(t, turn)
	if res.Err != nil || res.Completion.StopReason != event.StopEndTurn || textOf(evs) != "one two" || res.Completion.OutputText != "one two" {
		t.Fatalf("turn: %+v %q", res, textOf(evs))
	}
	if len(evs) != 3 || evs[1].Kind != event.ToolCall || evs[1].Tool.ID != "t1" || evs[1].Tool.Kind != "read" {
		t.Errorf("events: %+v", evs)
	}
	snap, _ := h.Snapshot(id)
	// The garbage is reported, not dropped unseen: the malformed line, the
	// non-object, the batch and the response to an unknown id.
	if n := h.Stats().ProtocolErrors; n != 4 {
		t.Errorf("%d protocol errors reported, want 4", n)
	}
	// The prompt is an entry of its own; the tool call splits the answer.
	if len(snap.Thread) != 3 || snap.Thread[0].Kind != "user" || snap.Thread[0].Text != "hi" || snap.Thread[1].Text != "one " ||
		snap.Thread[2].Text != "two" || len(snap.ToolCalls) != 1 {
		t.Errorf("read model: %+v", snap)
	}
	// More sessions, so the list needs two pages (the fake pages by 2).
	id2, _ := h.NewSession(context.Background(), SessionOptions{})
	h.NewSession(context.Background(), SessionOptions{})
	list, err := h.ListSessions(context.Background(), "")
	if err != nil || len(list) != 3 || len(rec.Method(acp.MethodSessionList)) != 2 {
		t.Fatalf("list: %v %v (%d calls)", list, err, len(rec.Method(acp.MethodSessionList)))
	}
	fork, err := h.ForkSession(context.Background(), id, SessionOptions{})
	if err != nil || fork == "" || fork == id {
		t.Fatalf("fork: %q %v", fork, err)
	}
	if err := h.CloseSession(context.Background(), id2); err != nil {
		t.Fatal(err)
	}
	if err := h.DeleteSession(context.Background(), fork); err != nil {
		t.Fatal(err)
	}
	if err := h.LoadSession(context.Background(), fork, SessionOptions{}); err == nil {
		t.Error("loading a deleted session succeeded")
	}
	if err := h.Reattach(context.Background(), id, SessionOptions{}); err != nil {
		t.Errorf("reattach: %v", err)
	}
	if s := h.Stats(); s.Sessions < 6 || s.Turns != 2 {
		t.Errorf("stats: %+v", s)
	}
}

func TestHostCapabilityChecks(t *testing.T) {
	h, _ := inProcess(t, acptest.Script{Capabilities: map[string]any{"loadSession": false}}, Options{})
	for name, call := range map[string]func() error{
		"list":   func() error { _, err := h.ListSessions(context.Background(), ""); return err },
		"fork":   func() error { _, err := h.ForkSession(context.Background(), "x", SessionOptions{}); return err },
		"close":  func() error { return h.CloseSession(context.Background(), "x") },
		"delete": func() error { return h.DeleteSession(context.Background(), "x") },
		"load":   func() error { return h.Reattach(context.Background(), "x", SessionOptions{}) },
		"dirs": func() error {
			_, err := h.NewSession(context.Background(), SessionOptions{AdditionalDirectories: []string{"/a"}})
			return err
		},
	} {
		if err := call(); err == nil || !strings.Contains(err.Error(), "does not support") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestHostAuthRequired(t *testing.T) {
	h, _ := inProcess(t, acptest.Script{AuthRequired: true}, Options{})
	_, err := h.NewSession(context.Background(), SessionOptions{})
	var auth *AuthRequiredError
	if !errors.As(err, &auth) || !IsAuthRequired(err) {
		t.Fatalf("err = %v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "authentication required") || !strings.Contains(msg, "Future auth (quantum_handshake)") {
		t.Errorf("message: %s", msg)
	}
}

// TestHostAuthority: permission through the handler, fs confined to the
// work directory, a terminal run and released with the turn.
func TestHostAuthority(t *testing.T) {
	work := t.TempDir()
	os.WriteFile(filepath.Join(work, "in.txt"), []byte("from disk"), 0o644)
	var asked acp.RequestPermissionRequest
	h, rec := inProcess(t, acptest.Script{AskPermission: acptest.PermissionParams(), ReadFile: "in.txt",
		WriteFile: &[2]string{"out/new.txt", "written"}, Terminal: []string{"sh", "-c", "echo term-out; exit 4"}},
		Options{WorkDir: work, AllowShell: true, Permission: func(_ context.Context, r acp.RequestPermissionRequest) acp.RequestPermissionResponse {
			if asked.ToolCall.ToolCallID == "" {
				asked = r
			}
			return pickOption(r.Options, true)
		}})
	id, _ := h.NewSession(context.Background(), SessionOptions{})
	turn, _ := h.Prompt(context.Background(), id, []acp.ContentBlock{{Type: "text", Text: "go"}})
	evs, res := collect(t, turn)
	text := textOf(evs)
	for _, want := range []string{"permission: allow-once", "read: from disk", "wrote: out/new.txt", "terminal: term-out\n|exit=4"} {
		if !strings.Contains(text, want) {
			t.Errorf("the agent reported %q, want %q", text, want)
		}
	}
	if res.Err != nil || asked.ToolCall.ToolCallID != "fake-call-1" {
		t.Errorf("%v %+v", res.Err, asked)
	}
	if data, _ := os.ReadFile(filepath.Join(work, "out", "new.txt")); string(data) != "written" {
		t.Errorf("out/new.txt = %q", data)
	}
	if h.terms.count() != 0 {
		t.Errorf("%d terminals left after the turn", h.terms.count())
	}
	if len(rec.Method("terminal/create")) != 0 {
		t.Error("the recorder sees the agent's side only")
	}
	// A path outside the work directory is refused.
	_, err := h.fs.readTextFile(context.Background(), json.RawMessage(`{"sessionId":"x","path":"../../etc/passwd"}`))
	if err == nil {
		t.Error("reading outside the work directory succeeded")
	}
}

func TestHostCancel(t *testing.T) {
	h, rec := inProcess(t, acptest.Script{HangPrompt: true}, Options{})
	id, _ := h.NewSession(context.Background(), SessionOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	turn, _ := h.Prompt(ctx, id, []acp.ContentBlock{{Type: "text", Text: "go"}})
	<-turn.Events // the first update: the turn runs
	cancel()
	_, res := collect(t, turn)
	if res.Err != nil || res.Completion.StopReason != event.StopCancelled {
		t.Fatalf("%+v", res)
	}
	if len(rec.Method(acp.MethodSessionCancel)) != 1 {
		t.Error("no session/cancel was sent")
	}
}

// TestHostKillsStubbornAgent: a real process that ignores EOF and SIGTERM
// is killed (its whole group) when the host closes.
func TestHostKillsStubbornAgent(t *testing.T) {
	cmd, args, env := acptest.Command(acptest.Script{IgnoreEOF: true, IgnoreSIGTERM: true})
	spec := AgentSpec{Name: "stubborn", Command: cmd, Args: args, Env: envMap(env)}
	var kills int
	h, err := Start(context.Background(), spec, Options{WorkDir: t.TempDir(), Grace: 100 * time.Millisecond,
		Hooks: Hooks{OnProcessEvent: func(e ProcessEvent) {
			if e.Type == "force_kill" {
				kills++
			}
		}}})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	h.Close()
	select {
	case <-h.Exited():
	case <-time.After(10 * time.Second):
		t.Fatal("the agent is still running")
	}
	if kills != 1 || time.Since(start) > 8*time.Second {
		t.Errorf("force kills %d after %v", kills, time.Since(start))
	}
}

// TestHostAgentDiesAtStart: the error quotes the agent's stderr.
func TestHostAgentDiesAtStart(t *testing.T) {
	_, err := Start(context.Background(), AgentSpec{Name: "broken", Command: "sh", Args: []string{"-c", "echo no config here >&2; exit 2"}},
		Options{WorkDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "exited during initialize") || !strings.Contains(err.Error(), "no config here") {
		t.Fatalf("err = %v", err)
	}
}

func TestHostReadModelLimits(t *testing.T) {
	var ups []json.RawMessage
	for i := range 6 {
		ups = append(ups, acptest.TextChunk("a"), json.RawMessage(`{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"t"}}`),
			json.RawMessage(`{"sessionUpdate":"tool_call","toolCallId":"c`+string(rune('0'+i))+`","title":"x","status":"completed"}`))
	}
	h, _ := inProcess(t, acptest.Script{Updates: ups}, Options{Limits: ReadModelLimits{MaxThreadEntries: 3, MaxToolCallEntries: 2, MaxPermissionEntries: -1}})
	id, _ := h.NewSession(context.Background(), SessionOptions{})
	turn, _ := h.Prompt(context.Background(), id, []acp.ContentBlock{{Type: "text", Text: "go"}})
	collect(t, turn)
	snap, _ := h.Snapshot(id)
	if len(snap.Thread) != 3 || len(snap.ToolCalls) != 2 || snap.ToolCalls[1].ID != "c5" || len(snap.Operations) != 2 || snap.Operations[1].ID != "c5" {
		t.Errorf("snapshot: %d thread, %+v", len(snap.Thread), snap.ToolCalls)
	}
}

func envMap(env []string) map[string]string {
	m := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "ACPTEST") {
			m[k] = v
		}
	}
	return m
}
