package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestInitFiles(t *testing.T) {
	home := filepath.Join(t.TempDir(), "nested", "home")
	written, err := InitFiles(home)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(home, "config.toml"), filepath.Join(home, "system.md")}
	if strings.Join(written, ",") != strings.Join(want, ",") {
		t.Errorf("written = %v, want %v", written, want)
	}
	if fi, err := os.Stat(home); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("home mode = %v, %v; want 0700", fi.Mode().Perm(), err)
	}
	for _, p := range want {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode = %v, %v; want 0600", p, fi.Mode().Perm(), err)
		}
	}

	// The starter config must load cleanly without any key in the environment.
	t.Setenv("OPENAI_API_KEY", "")
	os.Unsetenv("OPENAI_API_KEY")
	t.Setenv("OPENHEIM_HOME", home)
	var warn strings.Builder
	c, err := LoadWith("", &warn)
	if err != nil {
		t.Fatalf("starter config does not load: %v", err)
	}
	if warn.Len() > 0 {
		t.Errorf("starter config warns:\n%s", warn.String())
	}
	if c.DefaultProvider != "openai" || c.Providers["ollama"] == nil ||
		c.Providers["ollama"].Kind != KindOpenAICompatible || c.Path() != want[0] {
		t.Errorf("starter config content: %+v", c)
	}
	r, err := c.Resolve("", "")
	if err != nil || r.APIKey != "" {
		t.Errorf("Resolve on starter config: %+v, %v", r, err)
	}
	prompt, err := c.SystemPrompt()
	if err != nil || prompt != DefaultSystemPrompt() {
		t.Errorf("SystemPrompt after init = %q, %v", prompt, err)
	}
}

func TestInitRefusesToOverwrite(t *testing.T) {
	tests := []struct {
		name    string
		present []string
	}{
		{"config exists", []string{"config.toml"}},
		{"system exists", []string{"system.md"}},
		{"both exist", []string{"config.toml", "system.md"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			for _, name := range tt.present {
				if err := os.WriteFile(filepath.Join(home, name), []byte("mine"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			written, err := InitFiles(home)
			if err == nil || written != nil || !errors.Is(err, fs.ErrExist) {
				t.Fatalf("InitFiles = %v, %v; want an fs.ErrExist error", written, err)
			}
			for _, name := range tt.present {
				p := filepath.Join(home, name)
				if !strings.Contains(err.Error(), name+" already exists at "+p) {
					t.Errorf("error %q does not name %s", err, p)
				}
				if b, _ := os.ReadFile(p); string(b) != "mine" {
					t.Errorf("%s was overwritten", name)
				}
			}
			entries, _ := os.ReadDir(home)
			if len(entries) != len(tt.present) {
				t.Errorf("InitFiles wrote files despite refusing: %v", entries)
			}
		})
	}
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "config.toml"), nil, 0o600)
	_, err := InitFiles(home)
	want := "config.toml already exists at " + filepath.Join(home, "config.toml") + "; remove it or edit it by hand"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
}

// TestTemplateDocumentsEveryKey keeps the starter file in step with the
// struct tags: every key openheim reads appears in it, set or in a comment.
func TestTemplateDocumentsEveryKey(t *testing.T) {
	keys := []string{
		"default_provider", "max_iterations", "work_dir", "allow_shell", "theme_color",
		"kind", "api_base", "default_model", "models", "env_var", "api_key", "timeout_secs",
		"max_tokens", "context_window", "thinking", "thinking_budget", "adaptive_thinking", "cassette",
		"command", "args", "env", "cwd", "url", "headers", "tool_timeout_secs",
		"startup_timeout_secs", "enabled_tools", "disabled_tools",
		"embedding_provider", "embedding_model", "top_k", "allowed_origins", "roots", "allow_client_mcp_servers", "record_dir",
		"allow", "deny", "ask", "max_answer_bytes", "max_retry_wait_secs",
	}
	for _, k := range keys {
		if !regexp.MustCompile(`(?m)^#?\s*` + k + `\s`).MatchString(configTemplate) {
			t.Errorf("config template does not document %q", k)
		}
	}
	for _, table := range []string{"[providers.anthropic]", "[providers.gemini]", "[providers.replay]", "[mcp_servers."} {
		if !strings.Contains(configTemplate, table) {
			t.Errorf("config template lacks an example %s", table)
		}
	}
}

func TestSystemPrompt(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	os.WriteFile(path, nil, 0o600)
	c, err := LoadWith(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.SystemPrompt()
	if err != nil || got != DefaultSystemPrompt() {
		t.Fatalf("without system.md: %q, %v", got, err)
	}
	if !strings.Contains(got, "openheim") || !strings.Contains(got, "work directory") {
		t.Errorf("default prompt does not introduce openheim and the work directory:\n%s", got)
	}
	os.WriteFile(filepath.Join(dir, "system.md"), []byte("custom prompt"), 0o600)
	if got, err := c.SystemPrompt(); err != nil || got != "custom prompt" {
		t.Errorf("with system.md: %q, %v", got, err)
	}
	os.Remove(filepath.Join(dir, "system.md"))
	os.Mkdir(filepath.Join(dir, "system.md"), 0o700)
	if _, err := c.SystemPrompt(); err == nil {
		t.Error("unreadable system.md should be an error")
	}
}
