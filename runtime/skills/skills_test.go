package skills

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestListAndLoad(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	os.WriteFile(filepath.Join(dir, "rust.md"), []byte("Use cargo.\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "go.md"), []byte("Run go vet.\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a skill"), 0o644)
	os.WriteFile(filepath.Join(dir, ".hidden.md"), []byte("no"), 0o644)
	os.WriteFile(filepath.Join(outside, "secret.md"), []byte("secret"), 0o644)
	os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(dir, "escape.md"))
	os.Symlink(filepath.Join(dir, "go.md"), filepath.Join(dir, "golang.md")) // inside: fine
	os.Mkdir(filepath.Join(dir, "folder.md"), 0o755)

	names, err := List(dir)
	if err != nil || strings.Join(names, ",") != "go,golang,rust" {
		t.Fatalf("List = %v, %v", names, err)
	}
	got, err := Load(dir, []string{"rust", "go", "rust"})
	if err != nil || len(got) != 2 || got[0] != (Skill{"rust", "Use cargo."}) || got[1].Name != "go" {
		t.Fatalf("Load = %+v, %v", got, err)
	}
	for _, bad := range []string{"missing", "escape", "../secret", "a/b", "..", ".hidden", "folder", ""} {
		_, err := Load(dir, []string{bad})
		if !errors.Is(err, ErrUnknown) || !strings.Contains(err.Error(), "available: go, golang, rust") {
			t.Errorf("Load(%q) = %v", bad, err)
		}
	}
	if names, _ := List(filepath.Join(dir, "none")); len(names) != 0 {
		t.Errorf("missing dir lists %v", names)
	}
	_, err = Load(filepath.Join(dir, "none"), []string{"x"})
	if err == nil || !strings.Contains(err.Error(), "available: none") {
		t.Errorf("no skills dir: %v", err)
	}
}

func TestSystem(t *testing.T) {
	if got := System("/w", "", nil); got != "" {
		t.Errorf("empty identity and no skills: %q", got)
	}
	if got := System("/w", "  ", []Skill{{"empty", ""}}); got != "" {
		t.Errorf("blank identity and an empty skill: %q", got)
	}
	want := "You are an AI agent running in openheim. The work directory is /w. Your identity follows, then the skills active in this session, if any." +
		"\n\n# Identity\n\nBe kind.\n\n# Skill: rust\n\nUse cargo.\n\n# Skill: go\n\nRun go vet."
	if got := System("/w", "Be kind.\n", []Skill{{"rust", "Use cargo."}, {"go", "Run go vet."}}); got != want {
		t.Errorf("System =\n%s\nwant\n%s", got, want)
	}
	if got := System("/w", "", []Skill{{"rust", "Use cargo."}}); !strings.HasSuffix(got, "if any.\n\n# Skill: rust\n\nUse cargo.") || strings.Contains(got, "# Identity") {
		t.Errorf("skills only: %q", got)
	}
}
