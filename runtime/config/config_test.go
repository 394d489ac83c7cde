package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeConfig writes content as config.toml in a fresh directory.
func writeConfig(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// loadString loads content and fails the test on error or warnings.
func loadString(t *testing.T, content string) *Config {
	t.Helper()
	var warn strings.Builder
	c, err := LoadWith(writeConfig(t, content), &warn)
	if err != nil {
		t.Fatalf("LoadWith: %v", err)
	}
	if warn.Len() > 0 {
		t.Fatalf("unexpected warnings:\n%s", warn.String())
	}
	return c
}

func TestHome(t *testing.T) {
	userHome, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home directory")
	}
	tmp := t.TempDir()
	tests := []struct {
		env  string
		want string
	}{
		{"", filepath.Join(userHome, ".openheim")},
		{tmp, tmp},
		{"~/oh", filepath.Join(userHome, "oh")},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			t.Setenv("OPENHEIM_HOME", tt.env)
			if got := Home(); got != tt.want {
				t.Errorf("Home() = %q, want %q", got, tt.want)
			}
			if got, want := DefaultPath(), filepath.Join(tt.want, "config.toml"); got != want {
				t.Errorf("DefaultPath() = %q, want %q", got, want)
			}
		})
	}
}

func TestSetWorkDir(t *testing.T) {
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	userHome, _ := os.UserHomeDir()
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		in      string
		want    string
		wantErr string
	}{
		{"empty is cwd", "", cwd, ""},
		{"absolute", dir, dir, ""},
		{"relative to cwd", "templates", filepath.Join(cwd, "templates"), ""},
		{"dot dot cleaned", "templates/..", cwd, ""},
		{"tilde", "~", userHome, ""},
		{"missing", "/nope/not/here", "", "config: work_dir: /nope/not/here does not exist"},
		{"not a directory", file, "", "config: work_dir: " + file + " is not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Config{WorkDir: "/unchanged"}
			err := c.SetWorkDir(tt.in)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if c.WorkDir != "/unchanged" {
					t.Errorf("WorkDir changed to %q on error", c.WorkDir)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.WorkDir != tt.want {
				t.Errorf("WorkDir = %q, want %q", c.WorkDir, tt.want)
			}
		})
	}
}

func TestDirFallsBackToHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("OPENHEIM_HOME", home)
	if got := (&Config{}).Dir(); got != home {
		t.Errorf("Dir() = %q, want %q", got, home)
	}
}
