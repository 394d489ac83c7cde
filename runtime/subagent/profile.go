package subagent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// Profile is agents/<name>.md: front matter (description, model, provider,
// tools, max_iterations) between --- lines, then the system prompt.
//
//	---
//	description: Reads the code and answers questions about it
//	model: claude-haiku-4-5
//	tools: [read_file, search_files]
//	max_iterations: 6
//	---
//	You are a careful code reader. Cite file:line for every claim.
//
// The front matter is a small YAML subset: `key: value` lines, values plain,
// "double-quoted" (Go/JSON escapes) or 'single-quoted', a plain value's
// " # comment" dropped as in YAML; tools as [a, b], as "- item" lines under
// `tools:`, or comma-separated. Block scalars (| and >) are not supported.
// Profiles of the Rust openheim, with TOML front matter between +++ lines,
// load too. A file without front matter is all system prompt. Every field
// is optional: Model and Provider "" mean the parent's, Tools nil the
// parent's tools (an empty list: none), MaxIterations 0 the parent's cap.
type Profile struct {
	Name, Description, Model, Provider string
	Tools                              []string
	MaxIterations                      int
	System                             string
	// ACPAgent hands the task to an external ACP agent ([acp_agents] or a
	// preset) instead of a model: Claude Code, Codex, another openheim.
	ACPAgent string
}

var (
	validName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	validKey  = regexp.MustCompile(`^[a-z_]+$`)
)

// LoadProfiles reads every <name>.md in dir (<home>/agents). A missing dir
// holds no profiles. Hidden files and other extensions are ignored. A name
// outside [A-Za-z0-9_-], a symlink leading out of dir and malformed front
// matter are errors naming the file (and line).
func LoadProfiles(dir string) (map[string]Profile, error) {
	profiles := map[string]Profile{}
	root, err := os.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return profiles, nil
	}
	if err != nil {
		return nil, fmt.Errorf("subagent profiles: %w", err)
	}
	defer root.Close()
	entries, err := fs.ReadDir(root.FS(), ".")
	if err != nil {
		return nil, fmt.Errorf("subagent profiles: %w", err)
	}
	for _, e := range entries {
		file := e.Name()
		if strings.HasPrefix(file, ".") || !strings.HasSuffix(file, ".md") {
			continue
		}
		path := filepath.Join(dir, file)
		name := strings.TrimSuffix(file, ".md")
		if !validName.MatchString(name) {
			return nil, fmt.Errorf("%s: invalid subagent name %q: use only letters, digits, '-' and '_'", path, name)
		}
		// The root refuses symlinks that lead outside dir.
		data, err := root.ReadFile(file)
		if err != nil {
			if e.Type()&fs.ModeSymlink != 0 {
				return nil, fmt.Errorf("%s: a symlink must point to a file inside %s: %w", path, dir, err)
			}
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		p, err := parseProfile(name, string(data))
		if err != nil {
			return nil, fmt.Errorf("%s:%w", path, err)
		}
		profiles[name] = p
	}
	return profiles, nil
}

// lineError is a mistake at a line of the file; it prints as "N: what".
type lineError struct {
	line int
	msg  string
}

func (e *lineError) Error() string { return fmt.Sprintf("%d: %s", e.line, e.msg) }

func errAt(line int, format string, a ...any) error {
	return &lineError{line: line, msg: fmt.Sprintf(format, a...)}
}

func parseProfile(name, text string) (Profile, error) {
	text = strings.ReplaceAll(strings.TrimPrefix(text, "\ufeff"), "\r\n", "\n")
	p := Profile{Name: name}
	lines := strings.Split(text, "\n")
	delim := strings.TrimRight(lines[0], " \t")
	if delim != "---" && delim != "+++" {
		p.System = strings.TrimSpace(text)
		return p, nil
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		if strings.TrimRight(lines[i], " \t") == delim {
			end = i
			break
		}
	}
	if end < 0 {
		return p, errAt(1, "the front matter opened here is never closed with a %s line", delim)
	}
	var err error
	if delim == "+++" {
		err = parseTOML(&p, strings.Join(lines[1:end], "\n"))
	} else {
		err = parseYAML(&p, lines[1:end])
	}
	p.System = strings.TrimSpace(strings.Join(lines[end+1:], "\n"))
	return p, err
}

// parseYAML reads the front matter lines; lines[0] is line 2 of the file.
func parseYAML(p *Profile, lines []string) error {
	seen := map[string]bool{}
	for i := 0; i < len(lines); i++ {
		ln, raw := i+2, lines[i]
		s := strings.TrimSpace(raw)
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		key, val, ok := strings.Cut(s, ":")
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		if !ok || !validKey.MatchString(key) || raw[0] == ' ' || raw[0] == '\t' {
			return errAt(ln, "expected `key: value`, got %q", s)
		}
		if seen[key] {
			return errAt(ln, "%s is set twice", key)
		}
		seen[key] = true
		if key == "tools" && (val == "" || strings.HasPrefix(val, "#")) {
			// A block list: "- item" lines follow (or none: the parent's tools).
			for i+1 < len(lines) {
				t := strings.TrimSpace(lines[i+1])
				if t != "-" && !strings.HasPrefix(t, "- ") {
					break
				}
				i++
				item, err := scalar(strings.TrimSpace(t[1:]))
				if err != nil || item == "" {
					return errAt(i+2, "expected a tool name after '-', got %q", t)
				}
				p.Tools = append(p.Tools, item)
			}
			continue
		}
		if err := setField(p, key, val); err != nil {
			return errAt(ln, "%s: %v", key, err)
		}
	}
	return nil
}

func setField(p *Profile, key, val string) error {
	if key == "tools" {
		list, err := toolList(val)
		p.Tools = list
		return err
	}
	s, err := scalar(val)
	if err != nil {
		return err
	}
	switch key {
	case "name":
		// Tolerated for files written for other tools; the file name rules.
		if s != p.Name {
			return fmt.Errorf("%q differs from the file name %q", s, p.Name)
		}
	case "description":
		p.Description = s
	case "model":
		p.Model = s
	case "provider":
		p.Provider = s
	case "acp_agent":
		p.ACPAgent = s
	case "max_iterations":
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return fmt.Errorf("want a positive integer, got %q", s)
		}
		p.MaxIterations = n
	default:
		return errors.New("unknown key (known: description, model, provider, tools, max_iterations, acp_agent)")
	}
	return nil
}

// scalar decodes one YAML-ish value.
func scalar(v string) (string, error) {
	switch {
	case v == "":
		return "", nil
	case v[0] == '"':
		s, err := strconv.Unquote(v)
		if err != nil {
			return "", fmt.Errorf("bad double-quoted value %s", v)
		}
		return s, nil
	case v[0] == '\'':
		if len(v) < 2 || v[len(v)-1] != '\'' || strings.Contains(strings.ReplaceAll(v[1:len(v)-1], "''", ""), "'") {
			return "", fmt.Errorf("bad single-quoted value %s", v)
		}
		return strings.ReplaceAll(v[1:len(v)-1], "''", "'"), nil
	case strings.ContainsAny(v[:1], "|>"):
		return "", errors.New("block scalars (| and >) are not supported: write the value on one line")
	case strings.ContainsAny(v[:1], "[]{}&*!%@`"):
		return "", fmt.Errorf("quote a value starting with %q", v[:1])
	}
	if i := strings.Index(v, " #"); i >= 0 {
		v = strings.TrimSpace(v[:i])
	}
	return v, nil
}

// toolList reads [a, b] or a comma-separated list.
func toolList(v string) ([]string, error) {
	if strings.HasPrefix(v, "[") {
		if !strings.HasSuffix(v, "]") {
			return nil, errors.New("a [list] must close on the same line")
		}
		v = v[1 : len(v)-1]
	} else if i := strings.Index(v, " #"); i >= 0 {
		v = v[:i]
	}
	out := []string{}
	if strings.TrimSpace(v) == "" {
		return out, nil
	}
	for _, item := range strings.Split(v, ",") {
		s, err := scalar(strings.TrimSpace(item))
		if err != nil {
			return nil, err
		}
		if s == "" {
			return nil, fmt.Errorf("empty tool name in %q", v)
		}
		out = append(out, s)
	}
	return out, nil
}

// parseTOML reads +++ front matter (the Rust openheim's profile format).
func parseTOML(p *Profile, front string) error {
	var m struct {
		Description, Model, Provider string
		Tools                        []string
		MaxIterations                *int   `toml:"max_iterations"`
		ACPAgent                     string `toml:"acp_agent"`
	}
	md, err := toml.Decode(front, &m)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return errAt(pe.Position.Line+1, "%s", pe.Message)
		}
		return errAt(1, "%v", err)
	}
	if extra := md.Undecoded(); len(extra) > 0 {
		return errAt(1, "unknown key %s in the front matter (known: description, model, provider, tools, max_iterations, acp_agent)", extra[0])
	}
	if m.MaxIterations != nil && *m.MaxIterations < 1 {
		return errAt(1, "max_iterations: want a positive integer, got %d", *m.MaxIterations)
	}
	p.Description, p.Model, p.Provider, p.Tools, p.ACPAgent = m.Description, m.Model, m.Provider, m.Tools, m.ACPAgent
	if m.MaxIterations != nil {
		p.MaxIterations = *m.MaxIterations
	}
	return nil
}
