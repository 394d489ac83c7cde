package server

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/llm/llmtest"
)

// sseReader collects a stream's event names (and data) in the background.
type sseReader struct {
	mu     sync.Mutex
	events []map[string]any
	done   bool
}

func (f *fixture) sse(t *testing.T, path string, header http.Header) *sseReader {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, f.url(path), nil)
	req.Header = f.authed(header)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("stream %s: %v %v", path, resp, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	r := &sseReader{}
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			line := sc.Text()
			r.mu.Lock()
			switch {
			case line == "data: [DONE]":
				r.done = true
			case strings.HasPrefix(line, "data: "):
				var m map[string]any
				json.Unmarshal([]byte(line[6:]), &m)
				r.events = append(r.events, m)
			}
			r.mu.Unlock()
		}
	}()
	return r
}

// has reports whether an event of that type arrived whose JSON contains s.
func (r *sseReader) has(typ, s string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.events {
		if b, _ := json.Marshal(e); e["type"] == typ && strings.Contains(string(b), s) {
			return true
		}
	}
	return false
}

func (r *sseReader) ended() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.done
}

// TestSessionsAPISharesTurnsWithWS: a turn prompted on /ws streams on the
// session's SSE stream, a message posted to the sessions API streams to the
// /ws client that has the session open, and an interrupt from one stops a
// turn the other started.
func TestSessionsAPISharesTurnsWithWS(t *testing.T) {
	f := start(t, setup{})
	c, id := f.open(t)
	stream := f.sse(t, "/v1/sessions/conv_"+id+"/stream", nil)
	waitFor(t, func() bool { return stream.has("session.status", "idle") })

	f.llm.Enqueue(llmtest.Reply{Text: []string{"from ws"}})
	c.agentCall(2, "session/prompt", prompt(id, "hello over ws"))
	waitFor(t, func() bool {
		return stream.has("session.input.consumed", "hello over ws") && stream.has("response.output_text.delta", "from ws") &&
			stream.has("response.completed", "resp_"+strings.ReplaceAll(id, "-", "")+"_0")
	})

	f.llm.Enqueue(llmtest.Reply{Text: []string{"from sse ", "and more"}, Hang: true})
	code, body := f.do(t, http.MethodPost, "/v1/sessions/conv_"+id+"/events", "application/json",
		strings.NewReader(`{"type":"message","data":{"role":"user","content":"hello over http"}}`), f.authed(nil))
	if code != 202 {
		t.Fatalf("post: %d %s", code, body)
	}
	seen := map[string]bool{}
	for !seen["and more"] {
		m := c.next()
		if s, ok := at(m, "data.params.update.content.text").(string); ok {
			seen[s] = true
		}
	}
	// The /ws client cancels the turn the sessions API started.
	c.send("agent", map[string]any{"jsonrpc": "2.0", "method": "session/cancel", "params": map[string]any{"sessionId": id}})
	waitFor(t, func() bool { return stream.has("response.cancelled", "cancelled") && f.srv.Hub().Running() == 0 })

	// The same access rules as the rest of serve: the API is on the guarded mux.
	if code, _ := f.get(t, "/v1/openapi.json", nil); code != 200 {
		t.Errorf("openapi: %d", code)
	}
}

func TestSessionsAPIAuthAndShutdown(t *testing.T) {
	f := start(t, setup{token: "s3cret"})
	if code, _ := f.getAnon(t, "/v1/sessions", nil); code != 401 {
		t.Errorf("no token: %d", code)
	}
	auth := http.Header{"Authorization": {"Bearer s3cret"}}
	if code, body := f.get(t, "/v1/sessions", auth); code != 200 || !strings.Contains(string(body), `"object":"list"`) {
		t.Errorf("with token: %d %s", code, body)
	}
	req, _ := http.NewRequest(http.MethodPost, f.url("/v1/sessions"), strings.NewReader(`{"title":"t"}`))
	req.Header = auth.Clone()
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("create: %v %v", resp, err)
	}
	var snap map[string]any
	json.NewDecoder(resp.Body).Decode(&snap)
	resp.Body.Close()
	stream := f.sse(t, "/v1/sessions/"+snap["id"].(string)+"/stream", auth)
	waitFor(t, func() bool { return stream.has("session.status", "idle") })
	// Shutting down ends open streams with [DONE] instead of waiting on them.
	start := time.Now()
	f.stop()
	waitFor(t, stream.ended)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("shutdown with an open stream took %v", d)
	}
}
