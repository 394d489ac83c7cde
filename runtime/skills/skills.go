// Package skills loads skill files (skills/<name>.md next to system.md) and
// assembles the system message: a fixed preamble, the identity (system.md)
// and the active skills, in that order.
package skills

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// Skill is one loaded skill file.
type Skill struct {
	Name    string
	Content string
}

// ErrUnknown is wrapped by Load for a skill that does not exist.
var ErrUnknown = errors.New("unknown skill")

var validName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`) })

// ValidName reports whether name can name a skill: one safe path component
// (letters, digits, '_', '-', '.'; not starting with '.'), so a name can
// never reach outside the skills folder.
func ValidName(name string) bool {
	return len(name) <= 64 && validName().MatchString(name) && !strings.Contains(name, "..")
}

// List returns the names of the skills in dir (files <name>.md), sorted; a
// missing dir has none. Files whose names are not valid, and links leading
// out of dir, are skipped.
func List(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return []string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("skills: %w", err)
	}
	names := []string{}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".md")
		if !ok || !ValidName(name) {
			continue
		}
		if _, err := resolve(dir, name); err == nil {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names, nil
}

// resolve returns the real path of skill name, refusing links that lead out
// of dir and anything that is not a regular file.
func resolve(dir, name string) (string, error) {
	if !ValidName(name) {
		return "", fmt.Errorf("skill name %q is not valid (letters, digits, '_', '-', '.')", name)
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(filepath.Join(dir, name+".md"))
	if err != nil {
		return "", err
	}
	if filepath.Dir(real) != root {
		return "", fmt.Errorf("skill %q links outside %s", name, dir)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("skill %q is not a regular file", name)
	}
	return real, nil
}

// Load reads the named skills, in order. An unknown or invalid name is an
// error naming the available skills.
func Load(dir string, names []string) ([]Skill, error) {
	out := make([]Skill, 0, len(names))
	seen := map[string]bool{}
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		path, err := resolve(dir, name)
		if err != nil {
			return nil, unknown(dir, name, err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("skill %s: %w", name, err)
		}
		out = append(out, Skill{Name: name, Content: strings.TrimSpace(string(data))})
	}
	return out, nil
}

func unknown(dir, name string, cause error) error {
	avail, _ := List(dir)
	have := "none: add skills as " + filepath.Join(dir, "<name>.md")
	if len(avail) > 0 {
		have = strings.Join(avail, ", ")
	}
	if errors.Is(cause, fs.ErrNotExist) {
		return fmt.Errorf("%w %q (available: %s)", ErrUnknown, name, have)
	}
	return fmt.Errorf("%w %q: %v (available: %s)", ErrUnknown, name, cause, have)
}

// Preamble opens every system message; %s is the work directory.
const Preamble = "You are an AI agent running in openheim. The work directory is %s. " +
	"Your identity follows, then the skills active in this session, if any."

// System assembles the system message: the preamble, the identity, then
// each skill under its own heading. Nothing (an empty string) when the
// identity and the skills are all empty.
func System(workDir, identity string, active []Skill) string {
	identity = strings.TrimSpace(identity)
	var parts []string
	for _, s := range active {
		if s.Content != "" {
			parts = append(parts, fmt.Sprintf("# Skill: %s\n\n%s", s.Name, s.Content))
		}
	}
	if identity == "" && len(parts) == 0 {
		return ""
	}
	head := fmt.Sprintf(Preamble, workDir)
	if identity != "" {
		head += "\n\n# Identity\n\n" + identity
	}
	return strings.Join(append([]string{head}, parts...), "\n\n")
}
