package ndjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/redact"
)

func TestEncoderLines(t *testing.T) {
	why := "exit 1"
	var buf bytes.Buffer
	enc := NewEncoder(&buf)
	enc.Emit(event.Event{SessionID: "s1", Kind: event.SessionInfoUpdate, Info: &event.SessionInfo{Title: "t",
		UpdatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Model: "m", Provider: "p", Cwd: "/w"}})
	enc.Emit(event.Event{SessionID: "s1", Kind: event.MCPServerFailed, Server: &event.MCPServerStatus{Name: "gh", Transport: "stdio", Error: &why}})
	enc.Emit(event.Text("s1", event.AgentMessageChunk, ""))
	enc.Emit(event.Text("s1", event.AgentThoughtChunk, "hmm"))
	enc.Emit(event.Event{SessionID: "s1", Kind: event.ToolCall, Tool: &event.ToolCallInfo{ID: "c1", Title: "list_dir", Kind: "read", Status: "pending", RawInput: json.RawMessage(`{"path":"."}`)}})
	enc.Emit(event.Event{SessionID: "s1", Kind: event.ToolCallUpdate, Tool: &event.ToolCallInfo{ID: "c1", Status: "completed", RawOutput: json.RawMessage(`"a/\nb"`), Duration: time.Second}})
	enc.Emit(event.Event{SessionID: "s1", Kind: event.UsageUpdate, Usage: &event.ContextUsage{Used: 15, Size: 0}})
	enc.Emit(event.Event{SessionID: "s1", Kind: event.TurnEnd, End: &event.End{}}) // not a line
	enc.Finish("s1", event.End{StopReason: "end_turn", Usage: message.Usage{InputTokens: 10, OutputTokens: 5, CacheReadTokens: 2},
		Iterations: 2, Duration: 1500 * time.Millisecond, Err: errors.New("ignored")}, 0, "")
	want := []string{
		`{"sessionId":"s1","update":{"sessionUpdate":"session_info_update","title":"t","updatedAt":"2026-01-01T00:00:00Z","_meta":{"cwd":"/w","model":"m","provider":"p","schema":1}}}`,
		`{"sessionId":"s1","update":{"sessionUpdate":"session_info_update","_meta":{"openheim":{"mcpServerFailed":{"name":"gh","transport":"stdio","command":null,"url":null,"connected":false,"tool_count":0,"error":"exit 1"}}}}}`,
		`{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":""}}}`,
		`{"sessionId":"s1","update":{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hmm"}}}`,
		`{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"c1","title":"list_dir","kind":"read","status":"pending","rawInput":{"path":"."}}}`,
		`{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"completed","rawOutput":"a/\nb"}}`,
		`{"sessionId":"s1","update":{"sessionUpdate":"usage_update","used":15,"size":0}}`,
		`{"sessionId":"s1","stopReason":"end_turn","usage":{"totalTokens":17,"inputTokens":10,"outputTokens":5,"cachedReadTokens":2},"_meta":{"durationMs":1500,"exitCode":0,"iterations":2}}`,
	}
	got := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(got) != len(want) {
		t.Fatalf("got %d lines:\n%s", len(got), buf.String())
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d:\n got %s\nwant %s", i+1, got[i], want[i])
		}
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestEncoderKeepsFirstError(t *testing.T) {
	enc := NewEncoder(failWriter{})
	enc.Emit(event.Text("s", event.AgentMessageChunk, "x"))
	enc.Emit(event.Text("s", event.AgentMessageChunk, "y"))
	if enc.Err() == nil || !strings.Contains(enc.Err().Error(), "broken pipe") {
		t.Fatalf("err = %v", enc.Err())
	}
}

// TestEncoderRedacts: with a redactor, every line is masked whole: the
// error of _meta.error, a tool's output, and a secret straddling the
// 4 KiB write buffer in a long line.
func TestEncoderRedacts(t *testing.T) {
	const secret = `sk-"nd"-json-123456`
	var buf bytes.Buffer
	enc := NewEncoder(&buf).WithRedactor(redact.New(secret))
	enc.Emit(event.Event{SessionID: "s1", Kind: event.ToolCallUpdate, Tool: &event.ToolCallInfo{ID: "c1", Status: "completed",
		RawOutput: json.RawMessage(`"` + strings.Repeat("x", 4090) + `sk-\"nd\"-json-123456"`)}})
	why := "bad token " + secret
	enc.Emit(event.Event{SessionID: "s1", Kind: event.MCPServerFailed, Server: &event.MCPServerStatus{Name: "gh", Error: &why}})
	enc.Finish("s1", event.End{StopReason: "end_turn"}, 1, "HTTP 401: key "+secret)
	out := buf.String()
	if strings.Contains(out, "json-123456") || strings.Count(out, redact.Marker) != 3 {
		t.Fatalf("not masked:\n%s", out)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if !json.Valid([]byte(line)) {
			t.Errorf("a masked line is not JSON: %s", line)
		}
	}
}

// TestEncoderHeaderPerTurn: the first session_info_update of each turn is
// its header (a chat script runs several turns through one encoder); one
// later in the turn (an external agent renaming its session) is an update
// like any other.
func TestEncoderHeaderPerTurn(t *testing.T) {
	var buf bytes.Buffer
	enc := NewEncoder(&buf)
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	info := func(title string) event.Event {
		return event.Event{SessionID: "s1", Kind: event.SessionInfoUpdate, Info: &event.SessionInfo{Title: title, UpdatedAt: at, Model: "m"}}
	}
	enc.Emit(info("one"))
	enc.Emit(info("renamed"))
	enc.Finish("s1", event.End{StopReason: event.StopEndTurn}, 0, "")
	enc.Emit(info("two"))
	enc.Finish("s1", event.End{StopReason: event.StopRefusal}, 3, "the turn stopped early: refusal")
	want := []string{
		`{"sessionId":"s1","update":{"sessionUpdate":"session_info_update","title":"one","updatedAt":"2026-01-01T00:00:00Z","_meta":{"cwd":"","model":"m","provider":"","schema":1}}}`,
		`{"sessionId":"s1","update":{"sessionUpdate":"session_info_update","title":"renamed","updatedAt":"2026-01-01T00:00:00Z"}}`,
		`{"sessionId":"s1","stopReason":"end_turn","usage":{"totalTokens":0,"inputTokens":0,"outputTokens":0},"_meta":{"durationMs":0,"exitCode":0,"iterations":0}}`,
		`{"sessionId":"s1","update":{"sessionUpdate":"session_info_update","title":"two","updatedAt":"2026-01-01T00:00:00Z","_meta":{"cwd":"","model":"m","provider":"","schema":1}}}`,
		`{"sessionId":"s1","stopReason":"refusal","usage":{"totalTokens":0,"inputTokens":0,"outputTokens":0},"_meta":{"durationMs":0,"error":"the turn stopped early: refusal","exitCode":3,"iterations":0}}`,
	}
	if got := strings.Split(strings.TrimSpace(buf.String()), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// NDJSON is read in terminals and by jq, not embedded in HTML: text and
// tool content keep <, > and & as they are (the marker of a masked secret
// too), in a plain chunk and in a tool call's content alike.
func TestNoHTMLEscaping(t *testing.T) {
	var buf bytes.Buffer
	enc := NewEncoder(&buf)
	enc.Emit(event.Text("s", event.AgentMessageChunk, "a <b> & <redacted>"))
	blk := message.Text("if a < b && c > d")
	enc.Emit(event.Event{SessionID: "s", Kind: event.ToolCallUpdate, Tool: &event.ToolCallInfo{ID: "t", Status: event.StatusCompleted,
		Content: []event.ToolContent{{Block: &blk}}}})
	out := buf.String()
	for _, want := range []string{`"text":"a <b> & <redacted>"`, `"text":"if a < b && c > d"`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
}
