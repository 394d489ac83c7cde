package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/openheim/openheim/runtime/llm/llmtest"
	"github.com/openheim/openheim/runtime/message"
)

// assistantText is the text of a session's last assistant message.
func (f *fixture) assistantText(t *testing.T, id string) string {
	t.Helper()
	conv, err := f.store.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(conv.Messages) - 1; i >= 0; i-- {
		if m := conv.Messages[i]; m.Role == message.RoleAssistant {
			var b strings.Builder
			for _, blk := range m.Content {
				b.WriteString(blk.Text)
			}
			return b.String()
		}
	}
	return ""
}

func manyChunks(n int) ([]string, string) {
	chunks := make([]string, n)
	for i := range chunks {
		chunks[i] = fmt.Sprintf("chunk %06d of a long answer that a slow client cannot keep up with. ", i)
	}
	return chunks, strings.Join(chunks, "")
}

// TestSlowClientIsClosedAndTheTurnGoesOn: a client that stops reading is
// disconnected with a reason once its queue is full; the turn finishes and
// the session keeps the whole answer; the server serves others meanwhile.
func TestSlowClientIsClosedAndTheTurnGoesOn(t *testing.T) {
	// Socket buffers of fixed, small sizes on both sides, so the sockets
	// cannot absorb the stream (over 1.5 MB) and the client drains them fast
	// once it reads again. With the server's grown by the kernel to
	// hundreds of kB and the client's at 4 kB (its window reopened in
	// steps of a few kB, 200-400 ms apart), the drain took up to a minute,
	// past the server's 10 s write deadline for the frames stuck behind
	// it: the server gave up before it could send the close frame, and
	// 3 runs of 21 here failed with a read timeout instead of the reason.
	f := start(t, setup{sendQueue: 16, sndbuf: 8192})
	d := websocket.Dialer{NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetReadBuffer(65536)
		}
		return c, err
	}}
	ws, _, err := d.Dial("ws://"+f.addr+"/ws", f.authed(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	c := &wsClient{t: t, c: ws}
	c.next()
	c.agentCall(0, "initialize", map[string]any{"protocolVersion": 1})
	r, _ := c.agentCall(1, "session/new", map[string]any{"cwd": f.work, "mcpServers": []any{}})
	id := at(r, "data.result.sessionId").(string)

	chunks, whole := manyChunks(20000)
	f.llm.Enqueue(llmtest.Reply{Text: chunks})
	c.send("agent", map[string]any{"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": prompt(id, "talk a lot")})
	// Not reading: the turn must still run to its end.
	waitFor(t, func() bool { return f.llm.Pending() == 0 && f.srv.Hub().Running() == 0 })
	if got := f.assistantText(t, id); got != whole {
		t.Fatalf("the session kept %d of %d bytes of the answer", len(got), len(whole))
	}
	// Meanwhile another client is served.
	other := f.mustDial(t, "/ws")
	expect(t, "other client", other.next(), map[string]any{"data.type": "connected"})

	// Reading again, the slow client finds it was closed, with the reason.
	var closeErr *websocket.CloseError
	for {
		ws.SetReadDeadline(time.Now().Add(15 * time.Second))
		if _, _, err = ws.ReadMessage(); err != nil {
			break
		}
	}
	if !errors.As(err, &closeErr) || closeErr.Code != websocket.ClosePolicyViolation || !strings.Contains(closeErr.Text, "send queue full") {
		t.Fatalf("slow client: %v, want close 1008 \"send queue full ...\"", err)
	}
}

// TestTurnOutlivesItsConnection: a client that goes away mid-turn does not
// cancel it; a later connection loads the finished session.
func TestTurnOutlivesItsConnection(t *testing.T) {
	f := start(t, setup{})
	c, id := f.open(t)
	f.llm.Enqueue(llmtest.Reply{Text: []string{"first ", "second ", "third"}, ChunkDelayMs: 100})
	c.send("agent", map[string]any{"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": prompt(id, "go on without me")})
	c.until(func(m map[string]any) bool { return at(m, "data.params.update.sessionUpdate") == "agent_message_chunk" })
	c.c.Close()
	waitFor(t, func() bool { return f.srv.Hub().Running() == 0 })
	if got := f.assistantText(t, id); got != "first second third" {
		t.Fatalf("answer %q", got)
	}
	waitFor(t, func() bool { return f.srv.Conns() == 0 })
}

// TestGracefulShutdown: clients are told on the system channel, running
// turns answer cancelled, connections close with 1001, sessions are saved.
func TestGracefulShutdown(t *testing.T) {
	f := start(t, setup{})
	c, id := f.open(t)
	f.llm.Enqueue(llmtest.Reply{Text: []string{"partial answer"}, Hang: true})
	c.send("agent", map[string]any{"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": prompt(id, "a long task")})
	waitFor(t, func() bool { return f.llm.Hanging() > 0 })

	stopped := make(chan struct{})
	go func() {
		f.stop()
		close(stopped)
	}()
	var notice, answer bool
	var err error
	for err == nil {
		c.c.SetReadDeadline(time.Now().Add(15 * time.Second))
		var b []byte
		if _, b, err = c.c.ReadMessage(); err != nil {
			break
		}
		s := string(b)
		notice = notice || strings.Contains(s, `{"channel":"system","data":{"type":"shutting_down"`)
		if strings.Contains(s, `"id":2`) {
			answer = strings.Contains(s, `"stopReason":"cancelled"`)
			if !notice {
				t.Error("the turn's answer came before the shutdown notice")
			}
		}
	}
	var ce *websocket.CloseError
	if !notice || !answer || !errors.As(err, &ce) || ce.Code != websocket.CloseGoingAway {
		t.Fatalf("notice %v, cancelled answer %v, close %v (want 1001)", notice, answer, err)
	}
	<-stopped
	conv, lerr := f.store.Load(id)
	if lerr != nil || len(conv.Messages) == 0 || conv.Messages[0].Role != message.RoleUser {
		t.Fatalf("session after shutdown: %v %+v", lerr, conv)
	}
	if _, err := f.dial(t, "/ws", nil); err == nil {
		t.Error("the server still accepts connections after shutdown")
	}
}

// TestFSChannelOverWS runs the fs actions through the envelope, with ids
// echoed, a watch event, and a sandbox refusal.
func TestFSChannelOverWS(t *testing.T) {
	f := start(t, setup{})
	if err := os.WriteFile(filepath.Join(f.work, "main.rs"), []byte("fn main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := f.mustDial(t, "/ws")
	c.next()
	fsReply := func(m map[string]any) bool { return m["channel"] == "fs" && at(m, "data.type") != "fs_event" }
	call := func(data map[string]any) map[string]any {
		c.send("fs", data)
		m, _ := c.until(fsReply)
		return m
	}
	expect(t, "read", call(map[string]any{"action": "read", "path": "main.rs", "id": 7}), map[string]any{
		"data": map[string]any{"type": "file_content", "path": "main.rs", "content": "fn main() {}\n", "id": 7}})
	expect(t, "watch", call(map[string]any{"action": "watch", "path": f.work}), map[string]any{
		"data": map[string]any{"type": "watching", "path": f.work}})
	expect(t, "write", call(map[string]any{"action": "write", "path": "src/lib.rs", "content": "pub fn hello() {}", "id": "w1"}), map[string]any{
		"data": map[string]any{"type": "write_success", "path": "src/lib.rs", "id": "w1"}})
	ev, _ := c.until(func(m map[string]any) bool {
		return at(m, "data.type") == "fs_event" && strings.Contains(fmt.Sprint(at(m, "data.paths")), "lib.rs")
	})
	expect(t, "fs_event", ev, map[string]any{"channel": "fs", "data.eventKind": aString, "data.id": absent})
	list := call(map[string]any{"action": "list", "path": "src"})
	expect(t, "list", list, map[string]any{"data.type": "file_list", "data.path": "src",
		"data.entries.0.path": filepath.Join(f.work, "src", "lib.rs"), "data.entries.0.name": "lib.rs",
		"data.entries.0.is_dir": false, "data.entries.0.size": 17, "data.entries.0.modified": kindOf{"a number", func(v any) bool { _, ok := v.(float64); return ok }}})
	refused := call(map[string]any{"action": "read", "path": "../secrets", "id": 9})
	expect(t, "refusal", refused, map[string]any{"data.type": "error", "data.id": 9,
		"data.message": fmt.Sprintf("Tool execution error: path '../secrets' is outside the work directory '%s'", f.work)})
	expect(t, "unwatch", call(map[string]any{"action": "unwatch"}), map[string]any{"data": map[string]any{"type": "unwatched"}})
}

// TestShutdownWhileTheClientPongs: a client sending pongs all along (each
// pushes the read deadline a minute on) does not hold up the shutdown: its
// read is interrupted and stays so, and it is closed with 1001.
func TestShutdownWhileTheClientPongs(t *testing.T) {
	f := start(t, setup{})
	c, _ := f.open(t)
	stopPongs := make(chan struct{})
	pongsDone := make(chan struct{})
	go func() {
		defer close(pongsDone)
		for {
			select {
			case <-stopPongs:
				return
			case <-time.After(time.Millisecond):
			}
			if c.c.WriteControl(websocket.PongMessage, nil, time.Now().Add(time.Second)) != nil {
				return
			}
		}
	}()
	defer func() { close(stopPongs); <-pongsDone }()
	stopped := make(chan struct{})
	go func() {
		f.stop()
		close(stopped)
	}()
	var err error
	c.c.SetReadDeadline(time.Now().Add(15 * time.Second))
	for err == nil {
		_, _, err = c.c.ReadMessage()
	}
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.CloseGoingAway {
		t.Fatalf("close: %v (want 1001)", err)
	}
	select {
	case <-stopped:
	case <-time.After(15 * time.Second):
		t.Fatal("the server did not shut down")
	}
}
