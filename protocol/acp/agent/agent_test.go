package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/protocol/jsonrpc"
	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm/llmtest"
	"github.com/openheim/openheim/runtime/session"
)

// client is the editor side of a test connection.
type client struct {
	peer *jsonrpc.Peer
	srv  *llmtest.Server
	eng  *engine.Engine
	work string

	mu      sync.Mutex
	updates []json.RawMessage
	answer  string // the permission option to pick; "" cancels
	asked   int
	asks    []json.RawMessage // the params of each session/request_permission
}

func (c *client) Request(_ context.Context, method string, params json.RawMessage) (any, error) {
	if method == acp.MethodRequestPermission {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.asked++
		c.asks = append(c.asks, params)
		if c.answer == "" {
			return acp.RequestPermissionResponse{Outcome: acp.PermissionOutcome{Outcome: acp.OutcomeCancelled}}, nil
		}
		return acp.RequestPermissionResponse{Outcome: acp.PermissionOutcome{Outcome: acp.OutcomeSelected, OptionID: c.answer}}, nil
	}
	return nil, jsonrpc.NewError(jsonrpc.MethodNotFound, method)
}

func (c *client) Notification(_ context.Context, method string, params json.RawMessage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.updates = append(c.updates, params)
}

func (c *client) seen(kind string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, u := range c.updates {
		if strings.Contains(string(u), `"sessionUpdate":"`+kind+`"`) {
			n++
		}
	}
	return n
}

func connect(t *testing.T, extra string) *client {
	t.Helper()
	return connectWith(t, func(work, llmURL string) string {
		return fmt.Sprintf("default_provider = \"fake\"\nwork_dir = %q\n%s\n[providers.fake]\napi_base = %q\nmodels = [\"m1\", \"m2\"]\n",
			work, extra, llmURL)
	})
}

// connectWith is connect with the config file written by conf, given the
// work directory and the fake LLM's base URL; setup changes the engine
// before the agent starts.
func connectWith(t *testing.T, conf func(work, llmURL string) string, setup ...func(*engine.Engine)) *client {
	t.Helper()
	srv := llmtest.New()
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	os.MkdirAll(work, 0o755)
	path := filepath.Join(dir, "config.toml")
	os.WriteFile(path, []byte(conf(work, srv.URL())), 0o600)
	cfg, err := config.LoadWith(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	store, _ := session.NewFileStore(filepath.Join(dir, "history"))
	eng := &engine.Engine{Config: cfg, Store: store, Locker: &session.Locker{Dir: store.Dir}}
	for _, f := range setup {
		f(eng)
	}
	agentIn, clientOut := io.Pipe()
	clientIn, agentOut := io.Pipe()
	agent := &Agent{Engine: eng, Version: "test"}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		agent.Serve(ctx, jsonrpc.NewLineStream(agentIn, agentOut, agentOut))
		close(done)
	}()
	c := &client{srv: srv, eng: eng, work: work}
	c.peer = jsonrpc.NewPeer(jsonrpc.NewLineStream(clientIn, clientOut, clientOut), c)
	go c.peer.Run(ctx)
	t.Cleanup(func() { cancel(); clientOut.Close(); <-done })
	return c
}

func (c *client) call(method string, params any) (json.RawMessage, error) {
	var out json.RawMessage
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := c.peer.Call(ctx, method, params, &out)
	return out, err
}

func (c *client) mustCall(t *testing.T, method string, params any) json.RawMessage {
	t.Helper()
	out, err := c.call(method, params)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return out
}

func (c *client) init(t *testing.T, version any) {
	c.mustCall(t, acp.MethodInitialize, map[string]any{"protocolVersion": version, "clientCapabilities": map[string]any{}})
}

func (c *client) newSession(t *testing.T) string {
	var r acp.NewSessionResponse
	json.Unmarshal(c.mustCall(t, acp.MethodSessionNew, map[string]any{"cwd": c.work, "mcpServers": []any{}}), &r)
	return r.SessionID
}

func wantError(t *testing.T, err error, code int, data string) {
	t.Helper()
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != code {
		t.Fatalf("err = %v, want code %d", err, code)
	}
	got, _ := json.Marshal(rpc.Data)
	if data != "" && !strings.Contains(string(got), data) {
		t.Fatalf("data = %s, want %s", got, data)
	}
}

func TestErrorCodes(t *testing.T) {
	c := connect(t, "")
	_, err := c.call(acp.MethodSessionNew, map[string]any{"cwd": c.work})
	wantError(t, err, jsonrpc.InvalidRequest, "initialize")
	c.init(t, 1)
	_, err = c.call("session/fly", map[string]any{})
	wantError(t, err, jsonrpc.MethodNotFound, "")
	_, err = c.call(acp.MethodSessionLoad, map[string]any{"sessionId": "abc", "cwd": c.work})
	wantError(t, err, jsonrpc.InvalidParams, `"Invalid argument: invalid session id format"`)
	missing := "3fa0ad3c-8f3e-4c1f-9d6e-2d9b8d1e4f00"
	_, err = c.call(acp.MethodSessionLoad, map[string]any{"sessionId": missing, "cwd": c.work})
	wantError(t, err, jsonrpc.ResourceNotFound, `"session not found: `+missing+`"`)
	_, err = c.call(acp.MethodSessionNew, map[string]any{"cwd": c.work, "_meta": map[string]any{"model": "gpt-9"}})
	wantError(t, err, jsonrpc.InvalidParams, "m1, m2")
	_, err = c.call(acp.MethodSessionNew, map[string]any{"cwd": c.work, "_meta": map[string]any{"skills": []string{"rust"}}})
	wantError(t, err, jsonrpc.InvalidParams, "rust")
	_, err = c.call(acp.MethodSessionNew, map[string]any{"cwd": "relative/dir"})
	wantError(t, err, jsonrpc.InvalidParams, "absolute")
	_, err = c.call(acp.MethodSessionNew, map[string]any{"cwd": 42})
	wantError(t, err, jsonrpc.InvalidParams, "")
	id := c.newSession(t)
	// A cwd that does not exist: session/new and session/load say the same.
	gone := filepath.Join(c.work, "no-such-dir")
	_, err = c.call(acp.MethodSessionNew, map[string]any{"cwd": gone})
	wantError(t, err, jsonrpc.InvalidParams, `is not a directory`)
	_, err = c.call(acp.MethodSessionLoad, map[string]any{"sessionId": id, "cwd": gone, "mcpServers": []any{}})
	wantError(t, err, jsonrpc.InvalidParams, `cwd \"`+gone+`\" is not a directory`)
	_, err = c.call(acp.MethodSessionSetMode, map[string]any{"sessionId": id, "modeId": "yolo"})
	wantError(t, err, jsonrpc.InvalidParams, "code, architect")
	_, err = c.call(acp.MethodSessionPrompt, map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "audio", "data": "AA==", "mimeType": "audio/wav"}}})
	wantError(t, err, jsonrpc.InvalidParams, "audio")
	_, err = c.call(acp.MethodSessionSetConfigOption, map[string]any{"sessionId": id, "configId": "model", "value": "nope"})
	wantError(t, err, jsonrpc.InvalidParams, "")
}

func TestBusyAndLocked(t *testing.T) {
	c := connect(t, "")
	c.init(t, 1)
	id := c.newSession(t)
	c.srv.Enqueue(llmtest.Reply{Text: []string{"wait"}, Hang: true})
	first := make(chan error, 1)
	go func() {
		_, err := c.call(acp.MethodSessionPrompt, map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "one"}}})
		first <- err
	}()
	for deadline := time.Now().Add(5 * time.Second); c.srv.Hanging() < 1; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("first prompt never reached the model")
		}
	}
	_, err := c.call(acp.MethodSessionPrompt, map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "two"}}})
	wantError(t, err, jsonrpc.Internal, `{"kind":"session_busy","session_id":"`+id+`"}`)
	c.peer.Notify(acp.MethodSessionCancel, acp.CancelNotification{SessionID: id})
	if err := <-first; err != nil {
		t.Fatalf("a cancelled prompt answers, never fails: %v", err)
	}

	// Another process holds the session's lease.
	other := &session.Locker{Dir: c.eng.Store.(*session.FileStore).Dir, PID: os.Getppid(), Host: "elsewhere"}
	held, err := other.Acquire(id)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	_, err = c.call(acp.MethodSessionPrompt, map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "three"}}})
	wantError(t, err, jsonrpc.Internal, fmt.Sprintf(`"kind":"session_locked","pid":%d,"session_id":"%s"`, os.Getppid(), id))
}

func TestCancelAnswersCancelled(t *testing.T) {
	c := connect(t, "")
	c.init(t, 1)
	id := c.newSession(t)
	c.srv.Enqueue(llmtest.Reply{Text: []string{"partial"}, Hang: true})
	go func() {
		for c.srv.Hanging() < 1 {
			time.Sleep(5 * time.Millisecond)
		}
		c.peer.Notify(acp.MethodSessionCancel, acp.CancelNotification{SessionID: id})
	}()
	var r acp.PromptResponse
	json.Unmarshal(c.mustCall(t, acp.MethodSessionPrompt, map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "go"}}}), &r)
	if r.StopReason != event.StopCancelled {
		t.Fatalf("stopReason = %q", r.StopReason)
	}
}

func TestPermissionRejectedAndArchitectMode(t *testing.T) {
	c := connect(t, "")
	c.init(t, 1)
	id := c.newSession(t)
	c.srv.Enqueue(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "w", Name: "write_file", Arguments: `{"path":"x.txt","content":"x"}`}}},
		llmtest.Reply{Text: []string{"ok"}},
	)
	c.answer = acp.PermissionRejectOnce
	c.mustCall(t, acp.MethodSessionPrompt, map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "write"}}})
	if _, err := os.Stat(filepath.Join(c.work, "x.txt")); err == nil || c.asked != 1 {
		t.Fatalf("a rejected write happened (asked %d)", c.asked)
	}
	if !strings.Contains(string(c.srv.Requests()[1].Raw), "Permission denied by user.") {
		t.Error("the model was not told")
	}
	// Architect mode offers only read-only tools.
	c.mustCall(t, acp.MethodSessionSetMode, map[string]any{"sessionId": id, "modeId": ModeArchitect})
	if c.seen("current_mode_update") != 1 {
		t.Error("no current_mode_update")
	}
	c.srv.Enqueue(llmtest.Reply{Text: []string{"plan"}})
	c.mustCall(t, acp.MethodSessionPrompt, map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "plan"}}})
	body := string(c.srv.Requests()[2].Raw)
	offered := body[strings.Index(body, `"tools":`):]
	if strings.Contains(offered, `"name":"write_file"`) || !strings.Contains(offered, `"name":"read_file"`) {
		t.Errorf("architect mode tools: %s", offered)
	}
}

func TestSeed000Connection(t *testing.T) {
	c := connect(t, "")
	var init map[string]any
	json.Unmarshal(c.mustCall(t, acp.MethodInitialize, map[string]any{"protocolVersion": "0.1.0", "clientCapabilities": map[string]any{}}), &init)
	if init["protocolVersion"] != "0.1.0" {
		t.Fatalf("version answered as %v", init["protocolVersion"])
	}
	id := c.newSession(t)
	c.srv.Enqueue(llmtest.Reply{Thinking: []string{"hmm"}, Text: []string{"hello"}})
	c.mustCall(t, acp.MethodSessionPrompt, map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "hi"}}})
	got := ""
	for _, u := range c.updates {
		got += string(u) + "\n"
	}
	if !strings.Contains(got, `"sessionUpdate":"agent_message_chunk"`) || !strings.Contains(got, `"_meta":{"kind":"thinking"}`) || strings.Contains(got, `"update":`) {
		t.Fatalf("inline updates expected:\n%s", got)
	}
	out := c.mustCall(t, acp.MethodSessionLoad, map[string]any{"sessionId": id, "cwd": c.work})
	if string(out) != "null" {
		t.Fatalf("seed 000 load answers null, got %s", out)
	}
}

func TestListPagination(t *testing.T) {
	c := connect(t, "")
	c.init(t, 1)
	for range listPage + 5 {
		c.newSession(t)
	}
	var page acp.ListSessionsResponse
	json.Unmarshal(c.mustCall(t, acp.MethodSessionList, map[string]any{}), &page)
	if len(page.Sessions) != listPage || page.NextCursor == nil {
		t.Fatalf("first page: %d sessions, cursor %v", len(page.Sessions), page.NextCursor)
	}
	var last acp.ListSessionsResponse
	raw := c.mustCall(t, acp.MethodSessionList, map[string]any{"cursor": *page.NextCursor})
	json.Unmarshal(raw, &last)
	if len(last.Sessions) != 5 || strings.Contains(string(raw), "nextCursor") {
		t.Fatalf("last page: %s", raw)
	}
	json.Unmarshal(c.mustCall(t, acp.MethodSessionList, map[string]any{"cwd": "/elsewhere"}), &last)
	if len(last.Sessions) != 0 {
		t.Fatal("cwd filter ignored")
	}
	_, err := c.call(acp.MethodSessionList, map[string]any{"cursor": "garbage!"})
	wantError(t, err, jsonrpc.InvalidParams, "cursor")
}
