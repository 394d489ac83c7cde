//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/websocket"
	"github.com/tidwall/gjson"
)

// stampPrefix starts each streamed delta's text (see scripts/bench/streamllm):
// the provider's send time in unix nanoseconds follows, then "]".
var stampPrefix = []byte("[t=")

// Request ids of the three calls each connection makes.
const (
	idInitialize = 0
	idNewSession = 1
	idPrompt     = 2
)

// connResult is what one connection saw.
type connResult struct {
	setupErr error // dial, greeting, initialize or session/new failed
	runErr   error // the prompt failed or did not finish in time
	updates  int   // agent_message_chunk notifications
	chunks   int   // provider deltas in them (the server may merge several)
	lat      []int64
	others   map[string]int // every other frame, by kind
	first    int64          // unix ns: when the first update arrived
	done     int64          // unix ns: when the prompt's response arrived
	conn     *conn          // left open, so the run holds every session to its end
}

// conn is one WebSocket connection running one ACP session. It reads
// frames into one reused buffer: the driver shares the CPUs with the server
// under test, so it keeps its own per-frame work to a byte scan or two.
type conn struct {
	ws  *websocket.Conn
	buf bytes.Buffer
	res *connResult
}

// clientOpts is what every connection of a run shares.
type clientOpts struct {
	url string // ws://HOST/ws
	// watchURL, when set, is another replica's /ws: the session is loaded
	// there too, and its updates are counted there, not on url.
	watchURL string
	token    string // sent as Authorization: Bearer when set
	cwd      string
	chunks   int // expected deltas per reply, to size the latency slice

	setupSem chan struct{}   // bounds concurrent dial + set-up
	start    <-chan struct{} // closed when every connection is set up
	ready    func()          // called once, when set-up ended either way
}

// runConn sets up one session, waits for the start signal, prompts and
// reads the stream to the prompt's response. ctx's deadline bounds every
// wait.
func runConn(ctx context.Context, o clientOpts) *connResult {
	res := &connResult{others: map[string]int{}}
	deadline, _ := ctx.Deadline()
	o.setupSem <- struct{}{}
	c, sid, err := setup(ctx, o, res, deadline)
	<-o.setupSem
	o.ready()
	if err != nil {
		res.setupErr = err
		return res
	}
	res.conn = c
	var w *conn
	if o.watchURL != "" {
		if w, err = watcher(ctx, o, sid, res, deadline); err != nil {
			res.setupErr = err
			return res
		}
		defer w.close()
	}

	select {
	case <-o.start:
	case <-ctx.Done():
		res.runErr = errors.New("not started: " + context.Cause(ctx).Error())
		return res
	}
	res.lat = make([]int64, 0, o.chunks)
	if w == nil {
		res.runErr = c.prompt(sid)
		return res
	}
	// The prompter's own stream is read and dropped; the watcher counts.
	c.res = &connResult{others: map[string]int{}}
	done := make(chan error, 1)
	go func() { done <- c.prompt(sid) }()
	res.runErr = w.watch(o.chunks, done)
	return res
}

// watcher opens the session on the watch replica (session/load), where
// the updates of its turns arrive from the replica running them.
func watcher(ctx context.Context, o clientOpts, sid string, res *connResult, deadline time.Time) (*conn, error) {
	wo := o
	wo.url = o.watchURL
	c, err := dialInit(ctx, wo, res, deadline)
	if err != nil {
		return nil, fmt.Errorf("watch replica: %w", err)
	}
	if _, err := c.call(idNewSession, "session/load", map[string]any{"sessionId": sid, "cwd": o.cwd, "mcpServers": []any{}}); err != nil {
		c.close()
		return nil, fmt.Errorf("watch replica: %w", err)
	}
	return c, nil
}

// watch counts the updates of a turn prompted elsewhere until all chunks
// arrived, or the prompt answered and a grace period passed (what was
// dropped on the way is then missing from the count).
func (c *conn) watch(chunks int, prompted <-chan error) error {
	frames := make(chan []byte, 64)
	readErr := make(chan error, 1)
	go func() {
		for {
			msg, err := c.read()
			if err != nil {
				readErr <- err
				close(frames)
				return
			}
			frames <- bytes.Clone(msg)
		}
	}()
	var grace <-chan time.Time
	var perr error
	for c.res.chunks < chunks {
		select {
		case msg, ok := <-frames:
			if !ok {
				return fmt.Errorf("watching: after %d updates: %w", c.res.updates, <-readErr)
			}
			now := time.Now().UnixNano()
			if !isAgentChunk(msg) {
				c.res.others[frameKind(msg)]++
				continue
			}
			if c.res.updates == 0 {
				c.res.first = now
			}
			c.res.updates++
			c.res.done = now
			if i := bytes.Index(msg, stampPrefix); i >= 0 {
				c.res.lat = append(c.res.lat, now-parseStamp(msg[i+len(stampPrefix):]))
				c.res.chunks += bytes.Count(msg[i:], stampPrefix)
			}
		case perr = <-prompted:
			prompted = nil
			if perr != nil {
				return perr
			}
			grace = time.After(2 * time.Second)
		case <-grace:
			return nil
		}
	}
	if prompted != nil {
		perr = <-prompted
	}
	return perr
}

func setup(ctx context.Context, o clientOpts, res *connResult, deadline time.Time) (*conn, string, error) {
	c, err := dialInit(ctx, o, res, deadline)
	if err != nil {
		return nil, "", err
	}
	r, err := c.call(idNewSession, "session/new", map[string]any{"cwd": o.cwd, "mcpServers": []any{}})
	if err != nil {
		c.close()
		return nil, "", err
	}
	sid := r.Get("sessionId").String()
	if sid == "" {
		c.close()
		return nil, "", fmt.Errorf("session/new: no sessionId in %.200s", r.Raw)
	}
	return c, sid, nil
}

// dialInit connects to o.url, reads the greeting and initializes ACP.
func dialInit(ctx context.Context, o clientOpts, res *connResult, deadline time.Time) (*conn, error) {
	d := websocket.Dialer{HandshakeTimeout: 10 * time.Second}
	var h http.Header
	if o.token != "" {
		h = http.Header{"Authorization": {"Bearer " + o.token}}
	}
	ws, resp, err := d.DialContext(ctx, o.url, h)
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("dial: %w (HTTP %s)", err, resp.Status)
		}
		return nil, fmt.Errorf("dial: %w", err)
	}
	// One deadline for the whole run, set once, rather than a timer reset
	// on every frame.
	_ = ws.SetReadDeadline(deadline)
	_ = ws.SetWriteDeadline(deadline)
	c := &conn{ws: ws, res: res}

	greeting, err := c.read()
	if err != nil {
		c.close()
		return nil, fmt.Errorf("greeting: %w", err)
	}
	if gjson.GetBytes(greeting, "channel").String() != "fs" || gjson.GetBytes(greeting, "data.type").String() != "connected" {
		c.close()
		return nil, fmt.Errorf("greeting: expected the fs channel's connected message, got %.200s", greeting)
	}
	if _, err := c.call(idInitialize, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}); err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

func (c *conn) close() {
	_ = c.ws.WriteControl(websocket.CloseMessage,
		websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	_ = c.ws.Close()
}

// read returns the next text frame; the bytes are valid until the next read.
func (c *conn) read() ([]byte, error) {
	_, r, err := c.ws.NextReader()
	if err != nil {
		return nil, err
	}
	c.buf.Reset()
	if _, err := c.buf.ReadFrom(r); err != nil {
		return nil, err
	}
	return c.buf.Bytes(), nil
}

func (c *conn) send(id int, method string, params any) error {
	msg, err := json.Marshal(map[string]any{"channel": "agent", "data": map[string]any{
		"jsonrpc": "2.0", "id": id, "method": method, "params": params}})
	if err != nil {
		return err
	}
	if err := c.ws.WriteMessage(websocket.TextMessage, msg); err != nil {
		return fmt.Errorf("%s: send: %w", method, err)
	}
	return nil
}

// call sends a request and reads frames up to its response, tallying the
// ones before it.
func (c *conn) call(id int, method string, params any) (gjson.Result, error) {
	if err := c.send(id, method, params); err != nil {
		return gjson.Result{}, err
	}
	for {
		msg, err := c.read()
		if err != nil {
			return gjson.Result{}, fmt.Errorf("%s: waiting for the response: %w", method, err)
		}
		if res, ok, err := response(msg, id); ok {
			if err != nil {
				return gjson.Result{}, fmt.Errorf("%s: %w", method, err)
			}
			return res, nil
		}
		c.res.others[frameKind(msg)]++
	}
}

// prompt sends session/prompt and reads the stream to its response,
// recording each agent_message_chunk's delivery latency: receive time minus
// the first (oldest) stamp in its text.
func (c *conn) prompt(sid string) error {
	err := c.send(idPrompt, "session/prompt", map[string]any{"sessionId": sid,
		"prompt": []any{map[string]any{"type": "text", "text": "go"}}})
	if err != nil {
		return err
	}
	for {
		msg, err := c.read()
		now := time.Now().UnixNano()
		if err != nil {
			return fmt.Errorf("session/prompt: after %d updates: %w", c.res.updates, err)
		}
		if isAgentChunk(msg) {
			if c.res.updates == 0 {
				c.res.first = now
			}
			c.res.updates++
			if i := bytes.Index(msg, stampPrefix); i >= 0 {
				c.res.lat = append(c.res.lat, now-parseStamp(msg[i+len(stampPrefix):]))
				c.res.chunks += bytes.Count(msg[i:], stampPrefix)
			}
			continue
		}
		if res, ok, err := response(msg, idPrompt); ok {
			c.res.done = now
			if err != nil {
				return fmt.Errorf("session/prompt: %w", err)
			}
			if sr := res.Get("stopReason").String(); sr != "end_turn" {
				return fmt.Errorf("session/prompt: stop reason %q, want end_turn", sr)
			}
			return nil
		}
		c.res.others[frameKind(msg)]++
	}
}

// isAgentChunk reports whether a frame is an agent_message_chunk
// notification, in the canonical ACP v1 form (params.update.sessionUpdate)
// or seed 000's inline one (params.sessionUpdate). The byte search rules
// out most other frames before gjson looks.
func isAgentChunk(msg []byte) bool {
	if !bytes.Contains(msg, []byte(`"agent_message_chunk"`)) {
		return false
	}
	r := gjson.GetBytes(msg, "data.params.update.sessionUpdate")
	if !r.Exists() {
		r = gjson.GetBytes(msg, "data.params.sessionUpdate")
	}
	return r.Str == "agent_message_chunk"
}

// response reports whether msg is the agent channel's response to id, and
// its result or error.
func response(msg []byte, id int) (gjson.Result, bool, error) {
	d := gjson.GetBytes(msg, "data")
	rid := d.Get("id")
	if gjson.GetBytes(msg, "channel").Str != "agent" || d.Get("method").Exists() || !rid.Exists() || rid.Int() != int64(id) {
		return gjson.Result{}, false, nil
	}
	if e := d.Get("error"); e.Exists() {
		return gjson.Result{}, true, fmt.Errorf("error %s", e.Raw)
	}
	return d.Get("result"), true, nil
}

// frameKind names a frame for the tally of what else the server sent.
func frameKind(msg []byte) string {
	ch := gjson.GetBytes(msg, "channel").Str
	d := gjson.GetBytes(msg, "data")
	switch {
	case ch != "agent":
		return ch + ":" + d.Get("type").Str
	case d.Get("params.update.sessionUpdate").Exists():
		return d.Get("params.update.sessionUpdate").Str
	case d.Get("params.sessionUpdate").Exists():
		return d.Get("params.sessionUpdate").Str
	case d.Get("method").Exists():
		return d.Get("method").Str
	}
	return "response id " + strings.TrimSpace(d.Get("id").Raw)
}

// parseStamp reads the decimal digits at the start of b.
func parseStamp(b []byte) int64 {
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int64(c-'0')
	}
	return n
}
