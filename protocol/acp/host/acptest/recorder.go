package acptest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
)

// Received is one request or notification the fake agent received.
type Received struct {
	Method       string
	Params       json.RawMessage
	Notification bool
}

// Recorder records what an in-process fake agent received (set
// Script.Recorder). Its zero value is ready; it is safe for concurrent use.
// A process-mode agent logs the same to stderr instead: see ParseLog.
type Recorder struct {
	mu      sync.Mutex
	msgs    []Received
	changed chan struct{} // closed and replaced on every add
}

func (r *Recorder) add(m Received) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, m)
	if r.changed != nil {
		close(r.changed)
		r.changed = nil
	}
}

// All returns everything received so far, in arrival order.
func (r *Recorder) All() []Received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Received(nil), r.msgs...)
}

// Method returns what was received with method, in arrival order.
func (r *Recorder) Method(method string) []Received {
	var out []Received
	for _, m := range r.All() {
		if m.Method == method {
			out = append(out, m)
		}
	}
	return out
}

// Wait returns the n-th (from 1) message received with method, waiting
// for it until ctx is done. Hosts send session/cancel asynchronously, so
// tests need to wait for it rather than look once.
func (r *Recorder) Wait(ctx context.Context, method string, n int) (Received, error) {
	for {
		r.mu.Lock()
		seen := 0
		for _, m := range r.msgs {
			if m.Method == method {
				if seen++; seen == n {
					r.mu.Unlock()
					return m, nil
				}
			}
		}
		if r.changed == nil {
			r.changed = make(chan struct{})
		}
		ch := r.changed
		r.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return Received{}, fmt.Errorf("acptest: %s #%d not received: %w", method, n, ctx.Err())
		}
	}
}

// ParseLog parses the stderr of a process-mode fake agent into what it
// received. Lines that are not receive records (Script.Stderr noise) are
// skipped.
func ParseLog(stderr []byte) []Received {
	var out []Received
	sc := bufio.NewScanner(bytes.NewReader(stderr))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var l logLine
		if json.Unmarshal(sc.Bytes(), &l) != nil || l.Recv == "" {
			continue
		}
		out = append(out, Received{Method: l.Recv, Params: l.Params, Notification: l.Notification})
	}
	return out
}
