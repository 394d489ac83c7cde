package acptest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openheim/openheim/protocol/acp/host/acptest"
	"github.com/openheim/openheim/protocol/jsonrpc"
)

func TestMain(m *testing.M) {
	acptest.MaybeRunFakeAgent()
	os.Exit(m.Run())
}

// client is a minimal ACP host: it answers the agent's requests with
// canned results and collects session/update notifications.
type client struct {
	t      *testing.T
	peer   *jsonrpc.Peer
	hostW  io.Closer
	served chan error

	mu       sync.Mutex
	updates  []json.RawMessage // params of session/update
	requests []string          // methods the agent called
	answer   string            // permission optionId to select; "" = cancelled
}

func (c *client) Request(_ context.Context, method string, params json.RawMessage) (any, error) {
	c.mu.Lock()
	c.requests = append(c.requests, method)
	answer := c.answer
	c.mu.Unlock()
	switch method {
	case "session/request_permission":
		if answer == "" {
			return map[string]any{"outcome": map[string]any{"outcome": "cancelled"}}, nil
		}
		return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": answer}}, nil
	case "fs/read_text_file":
		return map[string]any{"content": "file body"}, nil
	case "fs/write_text_file", "terminal/release":
		return map[string]any{}, nil
	case "terminal/create":
		return map[string]any{"terminalId": "term-1"}, nil
	case "terminal/wait_for_exit":
		return map[string]any{"exitCode": 7}, nil
	case "terminal/output":
		return map[string]any{"output": "out", "truncated": false, "exitStatus": map[string]any{"exitCode": 7}}, nil
	}
	return nil, jsonrpc.NewError(jsonrpc.MethodNotFound, method)
}

func (c *client) Notification(_ context.Context, method string, params json.RawMessage) {
	if method == "session/update" {
		c.mu.Lock()
		c.updates = append(c.updates, params)
		c.mu.Unlock()
	}
}

// texts returns the text of every agent_message_chunk received.
func (c *client) texts() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, u := range c.updates {
		var n struct {
			Update struct {
				Kind    string `json:"sessionUpdate"`
				Content struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"update"`
		}
		if json.Unmarshal(u, &n) == nil && n.Update.Kind == "agent_message_chunk" {
			out = append(out, n.Update.Content.Text)
		}
	}
	return out
}

func start(t *testing.T, s acptest.Script) *client {
	t.Helper()
	hostR, agentW := io.Pipe()
	agentR, hostW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	c := &client{t: t, hostW: hostW, served: make(chan error, 1), answer: "allow-once"}
	go func() { c.served <- acptest.Serve(ctx, s, agentR, agentW) }()
	quiet := slog.New(slog.DiscardHandler)
	c.peer = jsonrpc.NewPeer(jsonrpc.NewLineStream(hostR, hostW, hostW), c, jsonrpc.WithLogger(quiet))
	go c.peer.Run(ctx)
	t.Cleanup(func() {
		cancel()
		<-c.peer.Done()
	})
	return c
}

func (c *client) call(method string, params, result any) error {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return c.peer.Call(ctx, method, params, result)
}

func (c *client) must(method string, params, result any) {
	c.t.Helper()
	if err := c.call(method, params, result); err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
}

func (c *client) init() {
	c.t.Helper()
	c.must("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}, nil)
}

func (c *client) newSession() string {
	c.t.Helper()
	var res struct {
		SessionID string `json:"sessionId"`
	}
	c.must("session/new", map[string]any{"cwd": "/tmp", "mcpServers": []any{}}, &res)
	return res.SessionID
}

func prompt(sid string) map[string]any {
	return map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "hi"}}}
}

func wantCode(t *testing.T, err error, code int) {
	t.Helper()
	var e *jsonrpc.Error
	if !errors.As(err, &e) || e.Code != code {
		t.Fatalf("got error %v, want code %d", err, code)
	}
}

func TestInitializeAndNewSession(t *testing.T) {
	rec := &acptest.Recorder{}
	c := start(t, acptest.Script{Recorder: rec})
	wantCode(t, c.call("session/new", map[string]any{"cwd": "/", "mcpServers": []any{}}, nil), jsonrpc.InvalidRequest)

	var res struct {
		ProtocolVersion   json.RawMessage       `json:"protocolVersion"`
		AgentInfo         struct{ Name string } `json:"agentInfo"`
		AgentCapabilities map[string]any        `json:"agentCapabilities"`
		AuthMethods       []map[string]any      `json:"authMethods"`
	}
	c.must("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}, &res)
	if string(res.ProtocolVersion) != "1" || res.AgentInfo.Name != acptest.AgentName || res.AuthMethods == nil || len(res.AuthMethods) != 0 {
		t.Fatalf("initialize: %+v", res)
	}
	sc, _ := res.AgentCapabilities["sessionCapabilities"].(map[string]any)
	for _, k := range []string{"list", "close", "resume", "fork"} {
		if _, ok := sc[k]; !ok || res.AgentCapabilities["loadSession"] != true {
			t.Fatalf("capabilities lack %s: %v", k, res.AgentCapabilities)
		}
	}
	mcp := []any{map[string]any{"name": "m", "command": "x", "args": []any{}, "env": []any{}}}
	c.must("session/new", map[string]any{"cwd": "/w", "mcpServers": mcp, "_meta": map[string]any{"k": "v"}}, nil)
	if sid := c.newSession(); sid != "fake-2" {
		t.Fatalf("second session id %q", sid)
	}
	news := rec.Method("session/new")
	if len(news) != 3 || !strings.Contains(string(news[1].Params), `"_meta":{"k":"v"}`) || !strings.Contains(string(news[1].Params), `"command":"x"`) {
		t.Fatalf("recorded session/new: %+v", news)
	}
}

func TestPromptStreamsUpdatesAfterGarbage(t *testing.T) {
	c := start(t, acptest.Script{
		Updates: []json.RawMessage{acptest.TextChunk("one"), json.RawMessage(`{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hmm"}}`), acptest.TextChunk("two")},
		Garbage: acptest.GarbageLines,
	})
	c.init()
	sid := c.newSession()
	var res struct{ StopReason string }
	c.must("session/prompt", prompt(sid), &res)
	if res.StopReason != "end_turn" {
		t.Fatalf("stopReason %q", res.StopReason)
	}
	// The garbage's session/update for "fake-none" is an update too.
	c.mu.Lock()
	n := len(c.updates)
	c.mu.Unlock()
	if got := strings.Join(c.texts(), ","); got != "one,two" || n != 4 {
		t.Fatalf("chunks %q, %d updates", got, n)
	}
	// Second prompt: no garbage again, default reply count unchanged.
	c.must("session/prompt", prompt(sid), &res)
	if got := strings.Join(c.texts(), ","); got != "one,two,one,two" {
		t.Fatalf("chunks after 2nd prompt %q", got)
	}
}

func TestClientRequestsRoundTrip(t *testing.T) {
	c := start(t, acptest.Script{
		AskPermission: acptest.PermissionParams(),
		ReadFile:      "/w/a.txt",
		WriteFile:     &[2]string{"/w/b.txt", "data"},
		Terminal:      []string{"echo", "out"},
	})
	c.init()
	sid := c.newSession()
	c.must("session/prompt", prompt(sid), nil)
	want := "permission: allow-once|read: file body|wrote: /w/b.txt|terminal: out|exit=7|" + acptest.DefaultReply
	if got := strings.Join(c.texts(), "|"); got != want {
		t.Fatalf("chunks\n got %q\nwant %q", got, want)
	}
	c.mu.Lock()
	c.answer = ""
	got := strings.Join(c.requests, ",")
	c.mu.Unlock()
	if got != "session/request_permission,fs/read_text_file,fs/write_text_file,terminal/create,terminal/wait_for_exit,terminal/output,terminal/release" {
		t.Fatalf("agent requests %s", got)
	}
	c.must("session/prompt", prompt(sid), nil)
	if texts := c.texts(); texts[5] != "permission: cancelled" {
		t.Fatalf("cancelled permission echoed as %q", texts[5])
	}
}

func TestAuthRequired(t *testing.T) {
	c := start(t, acptest.Script{AuthRequired: true})
	var res struct {
		AuthMethods []struct{ ID, Type string } `json:"authMethods"`
	}
	c.must("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}, &res)
	if len(res.AuthMethods) != 3 || res.AuthMethods[2].Type != "quantum_handshake" {
		t.Fatalf("authMethods %+v", res.AuthMethods)
	}
	err := c.call("session/new", map[string]any{"cwd": "/", "mcpServers": []any{}}, nil)
	wantCode(t, err, jsonrpc.AuthRequired)
	if err.(*jsonrpc.Error).Message != "Authentication required" {
		t.Fatalf("message %q", err.(*jsonrpc.Error).Message)
	}
	wantCode(t, c.call("session/prompt", prompt("fake-1"), nil), jsonrpc.AuthRequired)
	wantCode(t, c.call("authenticate", map[string]any{"methodId": "nope"}, nil), jsonrpc.InvalidParams)
	c.must("authenticate", map[string]any{"methodId": "fake-key"}, nil)
	c.must("session/prompt", prompt(c.newSession()), nil)
}

func TestHangUntilCancel(t *testing.T) {
	rec := &acptest.Recorder{}
	c := start(t, acptest.Script{HangPrompt: true, Recorder: rec})
	c.init()
	sid := c.newSession()
	done := make(chan string, 1)
	go func() {
		var res struct{ StopReason string }
		if err := c.call("session/prompt", prompt(sid), &res); err != nil {
			res.StopReason = err.Error()
		}
		done <- res.StopReason
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for len(c.texts()) == 0 { // the updates come before the hang
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case r := <-done:
		t.Fatalf("prompt answered %q before cancel", r)
	case <-time.After(50 * time.Millisecond):
	}
	if err := c.peer.Notify("session/cancel", map[string]any{"sessionId": sid}); err != nil {
		t.Fatal(err)
	}
	if r := <-done; r != "cancelled" {
		t.Fatalf("stopReason %q", r)
	}
	got, err := rec.Wait(ctx, "session/cancel", 1)
	if err != nil || !got.Notification || string(got.Params) != `{"sessionId":"fake-1"}` {
		t.Fatalf("recorded cancel %+v, %v", got, err)
	}
}

func TestSessionLifecycleAndListPages(t *testing.T) {
	c := start(t, acptest.Script{})
	c.init()
	for range 3 {
		c.newSession()
	}
	var fork struct{ SessionID string }
	c.must("session/fork", map[string]any{"sessionId": "fake-2", "cwd": "/tmp", "mcpServers": []any{}}, &fork)
	if fork.SessionID != "fake-4" {
		t.Fatalf("fork id %q", fork.SessionID)
	}
	c.must("session/delete", map[string]any{"sessionId": "fake-1"}, nil)
	c.must("session/close", map[string]any{"sessionId": "fake-3"}, nil)

	var ids []string
	var cursor *string
	for pages := 0; ; pages++ {
		var res struct {
			Sessions   []struct{ SessionID, CWD, UpdatedAt string }
			NextCursor *string
		}
		params := map[string]any{}
		if cursor != nil {
			params["cursor"] = *cursor
		}
		c.must("session/list", params, &res)
		if len(res.Sessions) > acptest.ListPageSize || pages > 3 {
			t.Fatalf("page %d: %+v", pages, res)
		}
		for _, s := range res.Sessions {
			ids = append(ids, s.SessionID)
		}
		if cursor = res.NextCursor; cursor == nil {
			break
		}
	}
	if got := strings.Join(ids, ","); got != "fake-2,fake-3,fake-4" {
		t.Fatalf("listed %s", got)
	}
	load := map[string]any{"sessionId": "fake-1", "cwd": "/tmp", "mcpServers": []any{}}
	wantCode(t, c.call("session/load", load, nil), jsonrpc.ResourceNotFound)
	load["sessionId"] = "fake-3"
	var res map[string]any
	c.must("session/load", load, &res)
	c.must("session/resume", load, &res)
	if res == nil {
		t.Fatal("session/resume answered null, want {}")
	}
	wantCode(t, c.call("session/list", map[string]any{"cursor": "x"}, nil), jsonrpc.InvalidParams)
}

func TestServeEndsOnEOFUnlessIgnored(t *testing.T) {
	c := start(t, acptest.Script{})
	c.init()
	c.hostW.Close()
	select {
	case err := <-c.served:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve still running after EOF")
	}

	c = start(t, acptest.Script{IgnoreEOF: true})
	c.init()
	c.hostW.Close()
	select {
	case err := <-c.served:
		t.Fatalf("Serve returned %v despite IgnoreEOF", err)
	case <-time.After(100 * time.Millisecond):
	}
}

func TestCrashInPrompt(t *testing.T) {
	c := start(t, acptest.Script{CrashInPrompt: true})
	c.init()
	err := c.call("session/prompt", prompt(c.newSession()), nil)
	if !errors.Is(err, jsonrpc.ErrClosed) {
		t.Fatalf("prompt to a crashing agent: %v", err)
	}
	if err := <-c.served; !errors.Is(err, acptest.ErrCrashed) {
		t.Fatalf("Serve: %v", err)
	}
}

// TestCancelRightBehindPrompt sends session/cancel in the same write as
// the prompt it cancels, which races the prompt's handler goroutine.
func TestCancelRightBehindPrompt(t *testing.T) {
	hostR, agentW := io.Pipe()
	agentR, hostW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go acptest.Serve(ctx, acptest.Script{HangPrompt: true}, agentR, agentW)
	defer hostW.Close()
	// A lost cancel hangs the prompt: fail instead of waiting for go test's timeout.
	timer := time.AfterFunc(10*time.Second, func() { hostR.CloseWithError(errors.New("no answer in 10 s")) })
	defer timer.Stop()
	lines := jsonrpc.NewLineStream(hostR, hostW, nil)
	reply := func(id int) string {
		t.Helper()
		for {
			msg, err := lines.Read()
			if err != nil {
				t.Fatal(err)
			}
			var m struct {
				ID     *int
				Method string
				Result json.RawMessage
			}
			json.Unmarshal(msg, &m)
			if m.Method == "" && m.ID != nil && *m.ID == id {
				return string(m.Result)
			}
		}
	}
	io.WriteString(hostW, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`+"\n")
	reply(0)
	for i := 1; i <= 30; i++ {
		io.WriteString(hostW, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`+"\n", 2*i))
		reply(2 * i)
		sid := fmt.Sprintf("fake-%d", i)
		io.WriteString(hostW, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":%q,"prompt":[]}}`+"\n"+
			`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":%q}}`+"\n", 2*i+1, sid, sid))
		if got := reply(2*i + 1); got != `{"stopReason":"cancelled"}` {
			t.Fatalf("prompt %d: %s", i, got)
		}
	}
}
