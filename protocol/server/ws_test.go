package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/openheim/openheim/runtime/llm/llmtest"
)

// agentCall sends a JSON-RPC request on the agent channel and returns its
// response and the frames read before it.
func (c *wsClient) agentCall(id float64, method string, params any) (map[string]any, []map[string]any) {
	c.t.Helper()
	c.send("agent", map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return c.until(response(id))
}

// open connects to /ws, initializes with ACP v1 and starts a session.
func (f *fixture) open(t *testing.T) (*wsClient, string) {
	t.Helper()
	c := f.mustDial(t, "/ws")
	c.next() // greeting
	c.agentCall(0, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	r, _ := c.agentCall(1, "session/new", map[string]any{"cwd": f.work, "mcpServers": []any{}})
	id, _ := at(r, "data.result.sessionId").(string)
	if id == "" {
		t.Fatalf("session/new: %v", r)
	}
	return c, id
}

func prompt(id, text string) map[string]any {
	return map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": text}}}
}

func TestBadEnvelopes(t *testing.T) {
	f := start(t, setup{maxFrame: 4096})
	c := f.mustDial(t, "/ws")
	c.next()
	cases := []struct {
		frame   string
		channel string
		message string
	}{
		{`hello`, "system", "Invalid payload: not JSON"},
		{`[1,2]`, "system", "Invalid payload: invalid type: array, expected an object {channel, data}"},
		{`{"data":{}}`, "system", "Invalid payload: missing field `channel`"},
		{`{"channel":7,"data":{}}`, "system", "Invalid payload: invalid type: field `channel` is a number, expected a string"},
		{`{"channel":"bogus","data":{}}`, "system", "Invalid payload: unknown channel `bogus`, expected `agent` or `fs`"},
		{`{"channel":"fs"}`, "fs", "Invalid payload: missing field `data`"},
		{`{"channel":"fs","data":{"path":"x"}}`, "fs", "Invalid payload: missing field `action`"},
		{`{"channel":"fs","data":{"action":"explode"}}`, "fs", "Invalid payload: unknown variant `explode`"},
	}
	for _, tc := range cases {
		c.sendRaw(tc.frame)
		m := c.next()
		msg, _ := at(m, "data.message").(string)
		if m["channel"] != tc.channel || at(m, "data.type") != "error" || !strings.HasPrefix(msg, tc.message) {
			t.Errorf("%s -> %v, want %s error %q", tc.frame, m, tc.channel, tc.message)
		}
	}
	// Bad JSON-RPC on the agent channel is answered by the peer.
	c.sendRaw(`{"channel":"agent","data":{"jsonrpc":"2.0","id":9,"method":"session/new","params":{}}}`)
	m, _ := c.until(response(9))
	expect(t, "before initialize", m, map[string]any{"data.error.code": -32600})
	c.sendRaw(`{"channel":"agent","data":[]}`)
	m = c.next()
	expect(t, "batch", m, map[string]any{"channel": "agent", "data.error.code": -32600})

	// The connection survived all of that; a huge frame closes it with 1009.
	c.sendRaw(`{"channel":"fs","data":{"action":"write","path":"big","content":"` + strings.Repeat("x", 8192) + `"}}`)
	c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, _, err := c.c.ReadMessage()
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.CloseMessageTooBig {
		t.Fatalf("huge frame: %v, want close 1009", err)
	}
	// ...and the server goes on.
	c2 := f.mustDial(t, "/ws")
	expect(t, "after", c2.next(), map[string]any{"data.type": "connected"})
}

func TestBareACP(t *testing.T) {
	f := start(t, setup{})
	c := f.mustDial(t, "/acp")
	call := func(id float64, method string, params any) (map[string]any, []map[string]any) {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		c.sendRaw(string(b))
		return c.until(func(m map[string]any) bool { return m["id"] == id && m["method"] == nil })
	}
	init, _ := call(0, "initialize", map[string]any{"protocolVersion": 1})
	expect(t, "initialize", init, map[string]any{"result.protocolVersion": 1, "result.agentCapabilities.loadSession": true})
	r, _ := call(1, "session/new", map[string]any{"cwd": f.work, "mcpServers": []any{}})
	id := at(r, "result.sessionId").(string)
	f.llm.Enqueue(llmtest.Reply{Text: []string{"Hello ", "there."}})
	res, updates := call(2, "session/prompt", prompt(id, "hi"))
	expect(t, "prompt", res, map[string]any{"result.stopReason": "end_turn"})
	var text strings.Builder
	for _, u := range updates {
		expect(t, "canonical update", u, map[string]any{"method": "session/update", "params.sessionId": id,
			"params.sessionUpdate": absent, "params.update.sessionUpdate": aString})
		if at(u, "params.update.sessionUpdate") == "agent_message_chunk" {
			text.WriteString(at(u, "params.update.content.text").(string))
		}
	}
	if text.String() != "Hello there." {
		t.Errorf("streamed %q", text.String())
	}
	c.sendRaw(`not json`)
	m := c.next()
	expect(t, "parse error", m, map[string]any{"id": nil, "error.code": -32700})

	// Shutdown closes /acp with 1001 and its reason, as it does /ws.
	go f.stop()
	c.c.SetReadDeadline(time.Now().Add(15 * time.Second))
	var err error
	for err == nil {
		_, _, err = c.c.ReadMessage()
	}
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.CloseGoingAway || ce.Text != "server shutting down" {
		t.Fatalf("close at shutdown: %v (want 1001 server shutting down)", err)
	}
}

// TestEveryWatcherSeesTheTurn: a second connection that loaded the session
// gets the turn's updates live, and may cancel it.
func TestEveryWatcherSeesTheTurn(t *testing.T) {
	f := start(t, setup{})
	c1, id := f.open(t)
	c2 := f.mustDial(t, "/ws")
	c2.next()
	c2.agentCall(0, "initialize", map[string]any{"protocolVersion": 1})
	c2.agentCall(1, "session/load", map[string]any{"sessionId": id, "cwd": f.work, "mcpServers": []any{}})

	f.llm.Enqueue(llmtest.Reply{Text: []string{"one ", "two "}, Hang: true})
	c1.send("agent", map[string]any{"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": prompt(id, "count")})
	seen := map[string]bool{}
	for !seen["two "] {
		m := c2.next()
		if at(m, "data.params.update.sessionUpdate") == "user_message_chunk" {
			seen["user:"+at(m, "data.params.update.content.text").(string)] = true
		}
		if s, ok := at(m, "data.params.update.content.text").(string); ok {
			seen[s] = true
		}
	}
	if !seen["user:count"] || !seen["one "] {
		t.Errorf("the watcher saw %v", seen)
	}
	// The watcher cancels the turn it did not start.
	c2.send("agent", map[string]any{"jsonrpc": "2.0", "method": "session/cancel", "params": map[string]any{"sessionId": id}})
	r, _ := c1.until(response(2))
	expect(t, "cancelled", r, map[string]any{"data.result.stopReason": "cancelled"})
	// A second prompt while one runs is busy, from either connection.
	f.llm.Enqueue(llmtest.Reply{Text: []string{"x"}, Hang: true})
	c1.send("agent", map[string]any{"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": prompt(id, "again")})
	waitFor(t, func() bool { return f.srv.Hub().Running() == 1 && f.llm.Pending() == 0 })
	busy, _ := c2.agentCall(4, "session/prompt", prompt(id, "me too"))
	expect(t, "busy", busy, map[string]any{"data.error.code": -32603, "data.error.data.kind": "session_busy", "data.error.data.session_id": id})
	c1.send("agent", map[string]any{"jsonrpc": "2.0", "method": "session/cancel", "params": map[string]any{"sessionId": id}})
	c1.until(response(3))
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestIdleConnectionGoroutines: an idle /ws connection with a session
// holds two goroutines in the server (the handler, which reads for the
// agent channel's JSON-RPC peer, and the writer), and a bare /acp one the
// same: a server holding many connections holds no more.
func TestIdleConnectionGoroutines(t *testing.T) {
	f := start(t, setup{})
	first, _ := f.open(t) // whatever the first connection starts once
	defer first.c.Close()
	const n = 20
	settled := func() int {
		// Goroutines that are ending (a handshake's) need a moment.
		g := runtime.NumGoroutine()
		for range 50 {
			time.Sleep(10 * time.Millisecond)
			if h := runtime.NumGoroutine(); h == g {
				return g
			} else {
				g = h
			}
		}
		return g
	}
	for _, path := range []string{"/ws", "/acp"} {
		base := settled()
		for i := range n {
			if path == "/ws" {
				c, _ := f.open(t)
				defer c.c.Close()
				continue
			}
			c := f.mustDial(t, path)
			defer c.c.Close()
			c.sendRaw(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":1}}`, i))
			c.next()
		}
		// A few goroutines of the server's own (an index being brought
		// up to date) may come and go meanwhile: 3 over 2 per connection.
		if more := settled() - base; more > 2*n+3 {
			t.Errorf("%s: %d more goroutines for %d idle connections, want at most 2 each", path, more, n)
		}
	}
}
