//go:build unix

package host

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
)

// deafAgent answers initialize and session/new, then never answers a
// prompt nor reacts to session/cancel; a prompt it got leaves the file
// named as its script with ".prompted" appended.
const deafAgent = `while IFS= read -r line; do
  case "$line" in
    *'"method":"initialize"'*) echo '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{}}}' ;;
    *'"method":"session/new"'*) echo '{"jsonrpc":"2.0","id":1,"result":{"sessionId":"deaf-1"}}' ;;
    *'"method":"session/prompt"'*) : > "$0.prompted" ;;
  esac
done`

// TestRunnerKillsAgentIgnoringCancel: a turn cancelled (a --timeout) that
// the agent does not end within the grace period gets the agent killed,
// and the turn ends cancelled with its input kept in the session.
func TestRunnerKillsAgentIgnoringCancel(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "deaf.sh")
	os.WriteFile(script, []byte(deafAgent), 0o755)
	store, err := session.NewFileStore(filepath.Join(dir, "history"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{WorkDir: dir, ACPAgents: map[string]*config.ACPAgent{"deaf": {Command: "sh", Args: []string{script}}}}
	r := &Runner{Engine: &engine.Engine{Config: cfg, Store: store}, Agent: "deaf", CancelGrace: 200 * time.Millisecond}
	defer r.Close()
	// Cancelled (as --timeout would) once the agent has the prompt: a
	// fixed 300 ms deadline could pass, on a loaded machine, while the
	// agent was still starting, and the turn failed instead.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		deadline := time.Now().Add(10 * time.Second)
		for _, err := os.Stat(script + ".prompted"); err != nil && time.Now().Before(deadline); _, err = os.Stat(script + ".prompted") {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	start := time.Now()
	var mu sync.Mutex
	var evs []event.Event
	meta, end, err := r.Prompt(ctx, engine.Request{Input: []message.Block{message.Text("hello?")},
		Sink: event.SinkFunc(func(ev event.Event) { mu.Lock(); evs = append(evs, ev); mu.Unlock() })})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	// The stream opens with the session, as the engine's turns do.
	if len(evs) == 0 || evs[0].Kind != event.SessionInfoUpdate || evs[0].SessionID != meta.ID ||
		*evs[0].Info != (event.SessionInfo{Title: "hello?", UpdatedAt: meta.CreatedAt, Model: "deaf", Provider: "acp", Cwd: dir}) {
		t.Errorf("first event: %+v", evs)
	}
	mu.Unlock()
	if end.StopReason != event.StopCancelled || time.Since(start) > 8*time.Second {
		t.Fatalf("end %+v after %v", end, time.Since(start))
	}
	conv, err := store.Load(meta.ID)
	if err != nil || len(conv.Messages) != 1 || conv.Meta.ACP == nil || conv.Meta.ACP.SessionID != "deaf-1" {
		t.Fatalf("session: %+v %v", conv, err)
	}
	r.mu.Lock()
	gone := r.host == nil
	r.mu.Unlock()
	if !gone {
		t.Error("the killed agent's host is still kept")
	}
}
