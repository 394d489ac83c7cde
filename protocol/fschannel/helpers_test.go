package fschannel

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// recorder stands in for the connection's send: it keeps every message,
// safe for the watcher goroutine to call.
type recorder struct {
	mu   sync.Mutex
	msgs []any
}

func (r *recorder) send(msg any) {
	r.mu.Lock()
	r.msgs = append(r.msgs, msg)
	r.mu.Unlock()
}

func (r *recorder) all() []any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]any(nil), r.msgs...)
}

// take returns the messages so far and forgets them.
func (r *recorder) take() []any {
	r.mu.Lock()
	defer r.mu.Unlock()
	msgs := r.msgs
	r.msgs = nil
	return msgs
}

func newChannel(t *testing.T) (*Channel, *recorder) {
	t.Helper()
	r := &recorder{}
	c, err := New(t.TempDir(), r.send)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, r
}

// wire is a message as the client sees it: marshalled and decoded again.
func wire(t *testing.T, msg any) map[string]any {
	t.Helper()
	data, err := json.Marshal(msg)
	if err != nil {
		t.Fatalf("marshal %#v: %v", msg, err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// call sends one request and returns its single reply as the client sees it.
func call(t *testing.T, c *Channel, r *recorder, req string) map[string]any {
	t.Helper()
	return callCtx(t, context.Background(), c, r, req)
}

func callCtx(t *testing.T, ctx context.Context, c *Channel, r *recorder, req string) map[string]any {
	t.Helper()
	r.take()
	c.Handle(ctx, json.RawMessage(req))
	msgs := r.take()
	if len(msgs) != 1 {
		t.Fatalf("request %s: got %d replies %v, want 1", req, len(msgs), msgs)
	}
	return wire(t, msgs[0])
}

// req builds a request from alternating keys and values.
func req(t *testing.T, kv ...any) string {
	t.Helper()
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
