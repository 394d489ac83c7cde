package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestQuickStartDemo runs the README's first quick-start command as written:
// from the repo root, the replay cassette drives a real turn whose tools
// read the demo project's real files.
func TestQuickStartDemo(t *testing.T) {
	bin := binary(t)
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	const prompt = "What is in this project? Read the notes and tell me."
	if !strings.Contains(string(readme), `prompt "`+prompt+`"`) {
		t.Fatal("README's quick start no longer runs the demo prompt this test checks")
	}
	cmd := exec.Command(bin, "--config", "testdata/demo/config.toml", "prompt", prompt)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "OPENHEIM_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := "Let me look at the project first.\n\nThis is **greet**"
	if !strings.HasPrefix(string(out), want) || !strings.Contains(string(out), "Norwegian") {
		t.Fatalf("output:\n%s", out)
	}
}
