package acp

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/message"
)

func TestUpdateFromEvent(t *testing.T) {
	img := message.Block{Type: message.TypeImage, Data: "AA==", MimeType: "image/png"}
	cmd, why := "gh-mcp", "exit 1"
	cases := []struct {
		ev   event.Event
		want string
	}{
		{event.Text("s", event.AgentThoughtChunk, "hm"), `{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hm"}}`},
		{event.Event{Kind: event.UserMessageChunk, Content: &img}, `{"sessionUpdate":"user_message_chunk","content":{"type":"image","data":"AA==","mimeType":"image/png"}}`},
		{event.Event{Kind: event.ToolCallUpdate, Tool: &event.ToolCallInfo{ID: "c", Status: "failed", RawOutput: json.RawMessage(`"Unknown tool: x"`)}},
			`{"sessionUpdate":"tool_call_update","toolCallId":"c","status":"failed","rawOutput":"Unknown tool: x"}`},
		{event.Event{Kind: event.Plan, Plan: []event.PlanEntry{{Content: "a", Status: "pending", Priority: "high"}}},
			`{"sessionUpdate":"plan","entries":[{"content":"a","priority":"high","status":"pending"}]}`},
		{event.Event{Kind: event.SessionInfoUpdate, Info: &event.SessionInfo{Title: "T", UpdatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}},
			`{"sessionUpdate":"session_info_update","title":"T","updatedAt":"2026-01-02T03:04:05Z"}`},
		{event.Event{Kind: event.Dropped, Count: 3}, `{"sessionUpdate":"session_info_update","_meta":{"openheim":{"droppedEvents":3}}}`},
		{event.Event{Kind: event.MCPServerFailed, Server: &event.MCPServerStatus{Name: "gh", Transport: "stdio", Command: &cmd, Error: &why}},
			`{"sessionUpdate":"session_info_update","_meta":{"openheim":{"mcpServerFailed":{"name":"gh","transport":"stdio","command":"gh-mcp","url":null,"connected":false,"tool_count":0,"error":"exit 1"}}}}`},
		// The turn's opening info is ACP's title and time; model, provider
		// and cwd are the NDJSON header's.
		{event.Event{Kind: event.SessionInfoUpdate, Info: &event.SessionInfo{Title: "T", Model: "m", Provider: "p", Cwd: "/w"}},
			`{"sessionUpdate":"session_info_update","title":"T"}`},
	}
	for _, c := range cases {
		u, ok := UpdateFromEvent(c.ev)
		got, _ := json.Marshal(u)
		if !ok || string(got) != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.ev.Kind, got, c.want)
		}
	}
	if _, ok := UpdateFromEvent(event.Event{Kind: event.TurnEnd}); ok {
		t.Error("turn_end is not a session update")
	}
}
