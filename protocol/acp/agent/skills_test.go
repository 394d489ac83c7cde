package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/openheim/openheim/protocol/acp"
)

// TestSessionSkills: initialize lists the skills; session/new's
// _meta.skills are validated and stored with the session.
func TestSessionSkills(t *testing.T) {
	c := connect(t, "")
	dir := filepath.Dir(c.eng.Config.Path())
	os.MkdirAll(filepath.Join(dir, "skills"), 0o755)
	os.WriteFile(filepath.Join(dir, "skills", "rust.md"), []byte("Use cargo."), 0o644)
	var init acp.InitializeResponse
	json.Unmarshal(c.mustCall(t, acp.MethodInitialize, map[string]any{"protocolVersion": 1}), &init)
	if got, _ := json.Marshal(init.Meta["skills"]); string(got) != `["rust"]` {
		t.Errorf("initialize _meta.skills = %s", got)
	}
	var r acp.NewSessionResponse
	json.Unmarshal(c.mustCall(t, acp.MethodSessionNew, map[string]any{"cwd": c.work, "_meta": map[string]any{"skills": []string{"rust"}}}), &r)
	meta, err := c.eng.Store.LoadMeta(r.SessionID)
	if err != nil || len(meta.Skills) != 1 || meta.Skills[0] != "rust" {
		t.Fatalf("stored skills: %v %v", meta, err)
	}
	_, err = c.call(acp.MethodSessionNew, map[string]any{"cwd": c.work, "_meta": map[string]any{"skills": []string{"python"}}})
	wantError(t, err, -32602, `unknown skill \"python\" (available: rust)`)
}
