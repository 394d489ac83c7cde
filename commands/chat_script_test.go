package commands

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/session"
)

func parseScript(t *testing.T, script string) ([]scriptItem, error) {
	t.Helper()
	var items []scriptItem
	err := readScript(strings.NewReader(script), func(it scriptItem) bool {
		items = append(items, it)
		return true
	})
	return items, err
}

func TestReadScript(t *testing.T) {
	items, err := parseScript(t, "# a comment\n\n  first prompt  \r\n/model fake-big\n//etc/hosts: what is it?\n"+
		"two \\\nlines\n<<EOF\nline 1\n  # not a comment\n\nEOF\nLead in: <<'END'\nbody\n  END  \n   # indented comment\nlast")
	if err != nil {
		t.Fatal(err)
	}
	want := []scriptItem{
		{line: 3, text: "first prompt"},
		{line: 4, slash: true, text: "/model fake-big"},
		{line: 5, text: "/etc/hosts: what is it?"},
		{line: 6, text: "two \nlines"},
		{line: 8, text: "line 1\n  # not a comment\n"},
		{line: 13, text: "Lead in:\nbody"},
		{line: 17, text: "last"},
	}
	if len(items) != len(want) {
		t.Fatalf("got %d items %+v, want %d", len(items), items, len(want))
	}
	for i := range want {
		if items[i] != want[i] {
			t.Errorf("item %d = %+v, want %+v", i, items[i], want[i])
		}
	}
}

func TestReadScriptErrors(t *testing.T) {
	_, err := parseScript(t, "ok\n<<EOF\nnever closed\n")
	if err == nil || err.Error() != `line 2: the <<EOF block is never closed by a line "EOF"` {
		t.Errorf("unclosed block: %v", err)
	}
	_, err = parseScript(t, "ok\n"+strings.Repeat("x", maxScriptLine+1)+"\n")
	if err == nil || !strings.Contains(err.Error(), "line 2: longer than") {
		t.Errorf("too long a line: %v", err)
	}
	// A step that says stop ends the reading there.
	n := 0
	err = readScript(strings.NewReader("a\nb\nc\n"), func(scriptItem) bool { n++; return n < 2 })
	if err != nil || n != 2 {
		t.Errorf("stopped after %d steps (err %v), want 2", n, err)
	}
}

// TestExampleScripts keeps scripts/examples valid: they parse and name only
// slash commands chat knows.
func TestExampleScripts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "scripts", "examples", "*.chat"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no example scripts: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		items, err := parseScript(t, string(data))
		if err != nil {
			t.Errorf("%s: %v", f, err)
		}
		prompts := 0
		for _, it := range items {
			if !it.slash {
				prompts++
				continue
			}
			name, _, _ := strings.Cut(strings.TrimPrefix(it.text, "/"), " ")
			if nearestCommand(name) != name {
				t.Errorf("%s:%d: unknown command /%s", f, it.line, name)
			}
		}
		if prompts == 0 {
			t.Errorf("%s has no prompt", f)
		}
	}
}

func TestPasteReader(t *testing.T) {
	in := "typed\r" + pasteStart + "a\r\nb\tc\nd" + pasteEnd + "\r\x1b[A\x1b[20x"
	want := "typed\ra" + pasteNewline + "b" + pasteTab + "c" + pasteNewline + "d\r\x1b[A\x1b[20x"
	// One byte per read splits every marker.
	got, err := io.ReadAll(newPasteReader(iotest.OneByteReader(strings.NewReader(in))))
	if err != nil || string(got) != want {
		t.Errorf("got %q (%v), want %q", got, err, want)
	}
	got, _ = io.ReadAll(newPasteReader(strings.NewReader(in)))
	if string(got) != want {
		t.Errorf("whole: got %q, want %q", got, want)
	}
	// A lone ESC at the end of the input is not lost.
	got, _ = io.ReadAll(newPasteReader(strings.NewReader("x\x1b[")))
	if string(got) != "x\x1b[" {
		t.Errorf("trailing partial marker: %q", got)
	}
	if restoreInput(historyEntry("a\nb\tc")) != "a\nb\tc" {
		t.Error("history entries do not round-trip")
	}
}

func TestChatCompleter(t *testing.T) {
	cfg := &config.Config{Providers: map[string]*config.Provider{
		"fake": {DefaultModel: "m1", Models: []string{"m1", "m2"}},
	}}
	cc := chatCompleter{&chat{cfg: cfg}}
	complete := func(line string) []string {
		cands, n := cc.Do([]rune(line), len([]rune(line)))
		var out []string
		for _, c := range cands {
			out = append(out, line[:len(line)-n]+line[len(line)-n:]+string(c))
		}
		return out
	}
	if got := strings.Join(complete("/mo"), ","); got != "/model ,/mode " {
		t.Errorf("/mo -> %s", got)
	}
	if got := strings.Join(complete("/model fake/m"), ","); got != "/model fake/m1,/model fake/m2" {
		t.Errorf("/model fake/m -> %s", got)
	}
	if got := strings.Join(complete("/mode a"), ","); got != "/mode architect" {
		t.Errorf("/mode a -> %s", got)
	}
	if got := complete("plain text"); got != nil {
		t.Errorf("a prompt completes nothing, got %v", got)
	}
}

func TestNearestCommand(t *testing.T) {
	for in, want := range map[string]string{"mdoel": "model", "sess": "sessions", "exot": "exit", "zzzzzz": ""} {
		if got := nearestCommand(in); got != want {
			t.Errorf("nearestCommand(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestChatCompleterSkillsAndSessions: /skills completes +name/-name from
// skills/, /resume the ids of stored sessions.
func TestChatCompleterSkillsAndSessions(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "skills"), 0o755)
	os.WriteFile(filepath.Join(dir, "skills", "golang.md"), []byte("Go"), 0o644)
	os.WriteFile(filepath.Join(dir, "config.toml"), nil, 0o644)
	cfg, err := config.LoadWith(filepath.Join(dir, "config.toml"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	store, err := session.NewFileStore(filepath.Join(dir, "history"))
	if err != nil {
		t.Fatal(err)
	}
	m := session.NewMeta(time.Now())
	store.Create(m)
	cc := chatCompleter{&chat{cfg: cfg, sess: &Sessions{Files: store, Store: store}}}
	cands, n := cc.Do([]rune("/skills +g"), len("/skills +g"))
	if n != 2 || len(cands) != 1 || string(cands[0]) != "olang" {
		t.Errorf("/skills +g -> %q (%d)", cands, n)
	}
	cands, n = cc.Do([]rune("/resume "+m.ID[:4]), len("/resume ")+4)
	if n != 4 || len(cands) != 1 || string(cands[0]) != m.ID[4:] {
		t.Errorf("/resume prefix -> %q (%d)", cands, n)
	}
}
