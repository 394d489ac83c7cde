package sessionsapi

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/llm/llmtest"
	"github.com/openheim/openheim/runtime/session"
)

// A workspace is checked through the work directory's root when the
// session is made, and again before each turn: a workspace replaced by a
// link since (a rename over the fs channel can do that) must not root the
// turn's tools wherever the link points.
func TestWorkspaceConfined(t *testing.T) {
	f := newFixture(t, "")
	f.llm.Enqueue(llmtest.Reply{Text: []string{"ok"}})
	outside := t.TempDir()
	os.MkdirAll(filepath.Join(f.work, "sub"), 0o755)
	os.Symlink("sub", filepath.Join(f.work, "in"))
	os.Symlink(outside, filepath.Join(f.work, "out"))
	for ws, want := range map[string]string{"out": "outside the work directory", outside: "outside the work directory",
		"nope": "no such directory", "in/../..": "outside the work directory"} {
		var bad map[string]any
		if code := f.do("POST", "/v1/sessions", map[string]any{"workspace": ws}, &bad); code != 422 || !strings.Contains(errMsg(bad), want) {
			t.Errorf("workspace %q: %d %v, want %q", ws, code, bad, want)
		}
	}
	// A link inside names the directory it leads to.
	snap := f.create(map[string]any{"workspace": "in"})
	if snap["workspace"] != filepath.Join(f.work, "sub") {
		t.Fatalf("workspace = %v", snap["workspace"])
	}
	conv := snap["id"].(string)

	// Swapped for a link to the outside: refused before it is queued.
	os.Rename(filepath.Join(f.work, "sub"), filepath.Join(f.work, "sub.real"))
	os.Symlink(outside, filepath.Join(f.work, "sub"))
	var out map[string]any
	if code := f.do("POST", "/v1/sessions/"+conv+"/events", userMessage("hi"), &out); code != 400 || !strings.Contains(errMsg(out), "no longer a directory of the work directory") {
		t.Fatalf("message into a swapped workspace: %d %v", code, out)
	}
	// Put back, the session works again.
	os.Remove(filepath.Join(f.work, "sub"))
	os.Rename(filepath.Join(f.work, "sub.real"), filepath.Join(f.work, "sub"))
	s := f.stream(conv)
	if code := f.do("POST", "/v1/sessions/"+conv+"/events", userMessage("hi"), nil); code != 202 {
		t.Fatalf("message after the repair: %d", code)
	}
	s.idle(1)
}

// TestWorkspaceOutsideNeedsARoot: a session begun outside work_dir (by the
// CLI in another directory) gets no turn through the API, as /ws and /acp
// refuse to load it, unless its directory lies in one of [serve] roots.
func TestWorkspaceOutsideNeedsARoot(t *testing.T) {
	elsewhere := t.TempDir()
	for _, roots := range [][]string{nil, {elsewhere}} {
		f := newFixture(t, "", func(o *Options) { o.Roots = roots })
		m := session.NewMeta(time.Now())
		m.Cwd = session.Str(elsewhere)
		if err := f.api.opts.Store.Create(m); err != nil {
			t.Fatal(err)
		}
		var out map[string]any
		code := f.do("POST", "/v1/sessions/"+convID(m.ID)+"/events", userMessage("hi"), &out)
		if roots == nil && (code != 400 || !strings.Contains(errMsg(out), "outside the directories this server runs turns in")) {
			t.Fatalf("no roots: %d %v", code, out)
		}
		if roots != nil && code != 202 {
			t.Fatalf("in a root: %d %v", code, out)
		}
	}
}
