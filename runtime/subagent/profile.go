package subagent

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

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
// The front matter is YAML (see frontmatter.go), one `key: value` per line:
// values plain, "double-quoted" or 'single-quoted', a " # comment" dropped;
// tools as [a, b], as "- item" lines under `tools:`, or comma-separated.
// Block scalars (| and >) are not supported. A plain value that YAML
// itself refuses (one holding ": ", as files written for other tools do) is
// read as the text it is. Profiles of the Rust openheim, with TOML front
// matter between +++ lines, load too. A file without front matter is all
// system prompt. Every field is optional: Model and Provider "" mean the
// parent's, Tools nil the parent's tools (an empty list: none),
// MaxIterations 0 the parent's cap.
type Profile struct {
	Name, Description, Model, Provider string
	Tools                              []string
	MaxIterations                      int
	System                             string
	// ACPAgent hands the task to an external ACP agent ([acp_agents] or a
	// preset) instead of a model: Claude Code, Codex, another openheim.
	ACPAgent string
}

var validName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]+$`) })

// LoadProfiles reads every <name>.md in dir (<home>/agents). A missing dir
// holds no profiles. Hidden files and other extensions are ignored. A name
// outside [A-Za-z0-9_-], a symlink leading out of dir and malformed front
// matter are errors naming the file (and line): the first, by file name.
func LoadProfiles(dir string) (map[string]Profile, error) {
	profiles, bad, err := ReadProfiles(dir)
	if err != nil {
		return nil, err
	}
	if len(bad) > 0 {
		return nil, bad[slices.Min(slices.Collect(maps.Keys(bad)))]
	}
	return profiles, nil
}

// ReadProfiles is LoadProfiles that keeps going past a bad file: bad holds
// each bad file's error, by file name. err is for dir itself.
func ReadProfiles(dir string) (profiles map[string]Profile, bad map[string]error, err error) {
	profiles, bad = map[string]Profile{}, map[string]error{}
	root, err := os.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return profiles, bad, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("subagent profiles: %w", err)
	}
	defer root.Close()
	entries, err := fs.ReadDir(root.FS(), ".")
	if err != nil {
		return nil, nil, fmt.Errorf("subagent profiles: %w", err)
	}
	for _, e := range entries {
		file := e.Name()
		if strings.HasPrefix(file, ".") || !strings.HasSuffix(file, ".md") {
			continue
		}
		p, err := readProfile(root, dir, e)
		if err != nil {
			bad[file] = err
			continue
		}
		profiles[p.Name] = p
	}
	return profiles, bad, nil
}

// readProfile reads one profile file through root, which refuses symlinks
// that lead outside dir.
func readProfile(root *os.Root, dir string, e fs.DirEntry) (Profile, error) {
	file := e.Name()
	path := filepath.Join(dir, file)
	name := strings.TrimSuffix(file, ".md")
	if !validName().MatchString(name) {
		return Profile{}, fmt.Errorf("%s: invalid subagent name %q: use only letters, digits, '-' and '_'", path, name)
	}
	data, err := root.ReadFile(file)
	if err != nil {
		if e.Type()&fs.ModeSymlink != 0 {
			return Profile{}, fmt.Errorf("%s: a symlink must point to a file inside %s: %w", path, dir, err)
		}
		return Profile{}, fmt.Errorf("%s: %w", path, err)
	}
	p, err := parseProfile(name, string(data))
	if err != nil {
		return Profile{}, fmt.Errorf("%s:%w", path, err)
	}
	return p, nil
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
