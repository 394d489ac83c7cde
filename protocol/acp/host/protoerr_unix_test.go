//go:build unix

package host

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/openheim/openheim/protocol/acp/host/acptest"
	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/permission"
	"github.com/openheim/openheim/runtime/redact"
)

// TestRunnerCaptureContent: [acp_agents.X] capture_content reaches the
// host, and the config's secrets (the agent's env) are masked in what it
// keeps.
func TestRunnerCaptureContent(t *testing.T) {
	odd := json.RawMessage(strings.ReplaceAll(string(oddUpdate), leakSecret, "tok-"+leakSecret))
	r, _ := fakeRunner(t, acptest.Script{Updates: []json.RawMessage{odd}}, &config.Config{WorkDir: t.TempDir()}, false)
	r.Engine.Config.ACPAgents["fake"].CaptureContent = CaptureFull
	r.Engine.Config.ACPAgents["fake"].Env = map[string]string{"FAKE_API_TOKEN": "tok-" + leakSecret}
	var raws []string
	var mu sync.Mutex
	r.Hooks = Hooks{OnProtocolError: func(e ProtocolError) { mu.Lock(); raws = append(raws, string(e.Raw)); mu.Unlock() }}
	r.Log = slog.New(slog.DiscardHandler)
	_, end, err := r.Prompt(context.Background(), engine.Request{Input: []message.Block{message.Text("go")},
		Gate: engine.Asking(permission.DenyAsker), Sink: event.SinkFunc(func(event.Event) {})})
	if err != nil || end.Err != nil {
		t.Fatalf("prompt: %v %v", err, end.Err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(raws) != 1 || !strings.Contains(raws[0], "file's text") || !strings.Contains(raws[0], "TOKEN="+redact.Marker) || strings.Contains(raws[0], leakSecret) {
		t.Errorf("raw: %q", raws)
	}
}
