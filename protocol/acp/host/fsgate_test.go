//go:build unix

package host

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openheim/openheim/protocol/acp/host/acptest"
	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/permission"
)

// An agent's fs/* requests go through the turn's one gate, from the
// Runner down: a write nobody asked about is refused under --deny-ask and
// under a deny rule (nothing written), a write to the path the agent's own
// permission request was allowed for is not asked about a second time,
// and a read under the default rules asks nobody.
func TestAgentFSThroughTheGate(t *testing.T) {
	work, _ := filepath.EvalSymlinks(t.TempDir())
	target, other := filepath.Join(work, "b.txt"), filepath.Join(work, "a.txt")
	if err := os.WriteFile(other, []byte("kept"), 0o600); err != nil {
		t.Fatal(err)
	}
	askFor := json.RawMessage(`{"toolCall":{"toolCallId":"w1","title":"Write b.txt","kind":"edit","status":"pending",` +
		`"locations":[{"path":"` + target + `"}]},"options":[{"optionId":"allow-once","name":"Allow","kind":"allow_once"},` +
		`{"optionId":"reject-once","name":"Reject","kind":"reject_once"}]}`)
	run := func(s acptest.Script, cfg *config.Config, asker permission.Asker) string {
		t.Helper()
		r, _ := fakeRunner(t, s, cfg, false)
		_, _, text := promptText(t, r, engine.Asking(asker))
		return text
	}
	write := &[2]string{target, "data"}

	out := run(acptest.Script{WriteFile: write}, &config.Config{WorkDir: work}, permission.DenyAsker)
	if !strings.Contains(out, "write error") || !strings.Contains(out, "refused edit") {
		t.Errorf("an unasked write under --deny-ask: %q", out)
	}
	out = run(acptest.Script{WriteFile: write}, &config.Config{WorkDir: work, Permissions: config.Permissions{Deny: []string{"edit"}}}, nil)
	if !strings.Contains(out, "write error") {
		t.Errorf("an unasked write under deny edit: %q", out)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatalf("a refused write landed: %v", err)
	}

	asks := 0
	once := permission.AskerFunc(func(context.Context, permission.Request) (permission.Outcome, error) {
		asks++
		return permission.AllowOnce, nil
	})
	out = run(acptest.Script{AskPermission: &askFor, WriteFile: write, ReadFile: other}, &config.Config{WorkDir: work}, once)
	if !strings.Contains(out, "permission: allow-once") || !strings.Contains(out, "read: kept") || !strings.Contains(out, "wrote: "+target) || asks != 1 {
		t.Errorf("a write the agent asked about: %q, asked %d times", out, asks)
	}
	if b, _ := os.ReadFile(target); string(b) != "data" {
		t.Errorf("the allowed write: %q", b)
	}
}
