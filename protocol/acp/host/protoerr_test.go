package host

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/protocol/acp/host/acptest"
	"github.com/openheim/openheim/runtime/redact"
)

const leakSecret = "sk-live-9f8e7d6c5b4a3210"

// oddUpdate does not decode whole (a numeric status) and carries a file's
// text, a path and a secret.
var oddUpdate = json.RawMessage(`{"sessionUpdate":"tool_call","toolCallId":"t9","title":"Read .env","kind":"read","status":7,` +
	`"rawInput":{"file_path":"/w/.env"},"content":[{"type":"content","content":{"type":"text","text":"TOKEN=` + leakSecret + ` and the file's text"}}]}`)

// TestCaptureContent: what a protocol error keeps of the message, in the
// hook and the debug log, at each level; the secret never gets out, even
// through a logger that does not redact.
func TestCaptureContent(t *testing.T) {
	for _, c := range []struct {
		capture      string
		want, absent []string
	}{
		{CaptureNone, nil, []string{"raw=", "t9", "file's text"}},
		{"", []string{`"sessionUpdate":"tool_call"`, `"toolCallId":"t9"`, `"status":7`, `"file_path":"\u003cstring, 7 bytes\u003e"`},
			[]string{"file's text", "/w/.env", "Read .env"}},
		{CaptureMetadata, []string{`"kind":"read"`, `"type":"content"`}, []string{"file's text", "/w/.env"}},
		{CaptureFull, []string{"file's text", "/w/.env", "TOKEN=" + redact.Marker}, nil},
	} {
		t.Run("capture="+c.capture, func(t *testing.T) {
			var mu sync.Mutex
			var raws []string
			var logged syncBuffer
			opts := Options{CaptureContent: c.capture, Redact: redact.New(leakSecret),
				Log:   slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug})),
				Hooks: Hooks{OnProtocolError: func(e ProtocolError) { mu.Lock(); raws = append(raws, string(e.Raw)); mu.Unlock() }}}
			h, _ := inProcess(t, acptest.Script{Updates: []json.RawMessage{oddUpdate}}, opts)
			id, _ := h.NewSession(context.Background(), SessionOptions{})
			turn, _ := h.Prompt(context.Background(), id, []acp.ContentBlock{{Type: "text", Text: "go"}})
			if evs, _ := collect(t, turn); len(evs) != 1 || evs[0].Tool == nil || evs[0].Tool.ID != "t9" {
				t.Errorf("the update was not used: %+v", evs)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(raws) != 1 {
				t.Fatalf("protocol errors: %q", raws)
			}
			raw, log := raws[0], logged.String()
			if c.capture == CaptureNone && raw != "" {
				t.Errorf("raw kept: %s", raw)
			}
			if c.capture != CaptureNone && !json.Valid([]byte(raw)) {
				t.Errorf("raw is not JSON: %s", raw)
			}
			for _, w := range c.want {
				if !strings.Contains(raw, w) {
					t.Errorf("raw lacks %s: %s", w, raw)
				}
			}
			for _, a := range append(c.absent, leakSecret) {
				if strings.Contains(raw, a) || strings.Contains(log, a) {
					t.Errorf("%q got out:\nraw %s\nlog %s", a, raw, log)
				}
			}
			if c.capture != CaptureNone && !strings.Contains(log, "level=DEBUG msg=\"acp host: the message that did not decode\"") {
				t.Errorf("the message is not in the debug log:\n%s", log)
			}
		})
	}
}

// TestCaptureContentChecked: a level that is not one is refused.
func TestCaptureContentChecked(t *testing.T) {
	_, err := Start(context.Background(), AgentSpec{Name: "x"}, Options{WorkDir: t.TempDir(), CaptureContent: "all"})
	if err == nil || !strings.Contains(err.Error(), `capture content "all" is not one of none, metadata, full`) {
		t.Errorf("err = %v", err)
	}
}

// TestShapeCutsLists: a long list keeps its first items and says how many
// more there were; what is not JSON is its length.
func TestShapeCutsLists(t *testing.T) {
	got := string(shape([]byte(`{"locations":[1,2,3,4,5,6,7,8,9,10],"id":"x"}`)))
	if got != `{"id":"x","locations":[1,2,3,4,5,6,7,8,"\u003c2 more\u003e"]}` {
		t.Errorf("shape: %s", got)
	}
	if got := string(shape([]byte("not json {"))); got != `"<not JSON, 10 bytes>"` {
		t.Errorf("shape: %s", got)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
