// Package enginetest has fakes of the engine's parts for other packages'
// tests.
package enginetest

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/tools"
)

// SlowMCP is an engine.ToolSource of one MCP server, "slow", that is still
// connecting when it is made and connects after the given delay, as a
// real server starting does: until then it reports not connected with no
// error and offers no tool; then its tool slow__ping.
type SlowMCP struct {
	ready chan struct{}
	once  sync.Once
}

// NewSlowMCP starts connecting; it is connected after delay.
func NewSlowMCP(delay time.Duration) *SlowMCP {
	s := &SlowMCP{ready: make(chan struct{})}
	time.AfterFunc(delay, func() { s.once.Do(func() { close(s.ready) }) })
	return s
}

func (s *SlowMCP) connected() bool {
	select {
	case <-s.ready:
		return true
	default:
		return false
	}
}

// Wait implements engine.ToolSource.
func (s *SlowMCP) Wait(ctx context.Context) {
	select {
	case <-s.ready:
	case <-ctx.Done():
	}
}

// Tools implements engine.ToolSource.
func (s *SlowMCP) Tools() []tools.Tool {
	if !s.connected() {
		return nil
	}
	return []tools.Tool{ping{}}
}

// Status implements engine.ToolSource.
func (s *SlowMCP) Status() []event.MCPServerStatus {
	cmd := "slow-server"
	st := event.MCPServerStatus{Name: "slow", Transport: "stdio", Command: &cmd}
	if s.connected() {
		st.Connected, st.ToolCount = true, 1
	}
	return []event.MCPServerStatus{st}
}

type ping struct{}

func (ping) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "slow__ping", Description: "Answers pong (from MCP server slow)",
		Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}
}
func (ping) Kind() string { return tools.KindRead }
func (ping) Run(context.Context, json.RawMessage) tools.Result {
	return tools.Result{Content: "pong"}
}
