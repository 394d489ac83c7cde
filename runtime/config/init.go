package config

import (
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The starter files live as real files so they can be read, diffed and
// loaded by tests exactly as users will see them.
var (
	//go:embed templates/config.toml
	configTemplate string
	//go:embed templates/system.md
	systemTemplate string
)

// DefaultSystemPrompt is used when Dir()/system.md does not exist; it is the
// same text `openheim init` writes, so deleting the file changes nothing.
func DefaultSystemPrompt() string { return strings.TrimSpace(systemTemplate) }

// ExistsError is returned by InitFiles when a starter file is already there.
// It matches fs.ErrExist under errors.Is.
type ExistsError struct {
	Paths []string // the files that already exist
}

func (e *ExistsError) Error() string {
	parts := make([]string, len(e.Paths))
	for i, p := range e.Paths {
		parts[i] = fmt.Sprintf("%s already exists at %s", filepath.Base(p), p)
	}
	if len(parts) == 1 {
		return parts[0] + "; remove it or edit it by hand"
	}
	return strings.Join(parts, " and ") + "; remove them or edit them by hand"
}

func (e *ExistsError) Unwrap() error { return fs.ErrExist }

// InitFiles creates home (0700) with a commented config.toml and a default
// system.md (both 0600: config.toml may come to hold an api_key). It never
// overwrites: if either file exists nothing is written, since half an init
// next to a user's edited file is more confusing than none.
func InitFiles(home string) (written []string, err error) {
	files := []struct{ path, content string }{
		{filepath.Join(home, "config.toml"), configTemplate},
		{filepath.Join(home, "system.md"), systemTemplate},
	}
	var existing []string
	for _, f := range files {
		if _, err := os.Lstat(f.path); err == nil {
			existing = append(existing, f.path)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("init: %w", err)
		}
	}
	if len(existing) > 0 {
		return nil, &ExistsError{Paths: existing}
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, fmt.Errorf("init: %w", err)
	}
	for _, f := range files {
		if err := writeNew(f.path, f.content); err != nil {
			// Undo, so a retry after fixing the cause starts clean rather
			// than tripping over our own partial output.
			for _, p := range written {
				_ = os.Remove(p)
			}
			if errors.Is(err, fs.ErrExist) {
				return nil, &ExistsError{Paths: []string{f.path}}
			}
			return nil, fmt.Errorf("init: %w", err)
		}
		written = append(written, f.path)
	}
	return written, nil
}

// writeNew uses O_EXCL so a file created between the existence check and the
// write (another init, an editor) is still never clobbered.
func writeNew(path, content string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(content); err != nil {
		f.Close()
		_ = os.Remove(path)
		return err
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(path)
		return err
	}
	return nil
}

// SystemPrompt returns Dir()/system.md if it exists, else DefaultSystemPrompt().
// An unreadable file is an error rather than a silent fallback: the user
// wrote it and expects it to be used.
func (c *Config) SystemPrompt() (string, error) {
	data, err := os.ReadFile(filepath.Join(c.Dir(), "system.md"))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return DefaultSystemPrompt(), nil
	case err != nil:
		return "", fmt.Errorf("config: system prompt: %w", err)
	}
	// Editors leave a trailing newline; it would only cost a token per call.
	return strings.TrimSpace(string(data)), nil
}
