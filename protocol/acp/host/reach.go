package host

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/runtime/permission"
)

// What an external agent's permission request will touch, read from the
// tool call it is about, so that openheim's gate judges the call by that
// rather than by the kind the agent put on it (Codex labels `bash -lc ls`
// "search"). The agents openheim drives do their work with their own tools
// and only ask; what they ask about is all the host can see.
//
// Paths come from:
//   - locations[].path;
//   - content: a diff's path, a resource link's file:// uri;
//   - rawInput, at any depth, under a path key (below), as a string or a
//     list of strings; under "changes" (Codex's apply_patch) the keys of
//     the object are paths too; under "file_system"/"fileSystem" (Codex's
//     permission requests) every string is one; "uri"/"url" values that
//     are file:// URLs.
//
// A command is present when rawInput holds a command key (below) at any
// depth, as a string or a list of strings (Codex sends argv, e.g.
// ["/bin/bash", "-lc", "ls"]), or the content holds a terminal block.
//
// Keys are compared lower-cased without "_" and "-", so file_path,
// filePath and file-path are one key. Relative paths are taken from
// rawInput's own cwd when it is absolute, else from the session's cwd; "~"
// is the home directory. A relative value that is not a path at all (a
// branch named in "target") lands inside the work directory and costs
// nothing; the lists err on the side of reading too much.
var (
	reachPathKeys = keySet("path", "paths", "file_path", "file_paths", "filepath", "file", "files", "filename",
		"notebook_path", "cwd", "dir", "dirs", "directory", "directories", "workdir", "working_dir",
		"working_directory", "root", "roots", "target", "target_file", "target_path", "target_dir",
		"source", "source_path", "destination", "dest", "dest_path", "old_path", "new_path", "move_path",
		"grant_root", "writable_roots", "additional_directories", "additional_roots")
	reachCommandKeys = keySet("command", "commands", "cmd", "argv", "script", "shell_command")
)

func keySet(keys ...string) map[string]bool {
	m := map[string]bool{}
	for _, k := range keys {
		m[normKey(k)] = true
	}
	return m
}

// normKey lower-cases k and drops "_" and "-" (strings.Map rather than a
// Replacer: building one per call cost every start-up 0.2 ms, as keySet
// runs at package init).
func normKey(k string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' {
			return -1
		}
		return unicode.ToLower(r)
	}, k)
}

// reachOf is what tool call tc touches, cwd being the session's.
func reachOf(tc acp.PermissionToolCall, cwd string) permission.Reach {
	var raw any
	_ = json.Unmarshal(tc.RawInput, &raw) // not JSON: nothing to read
	s := reachScan{base: cwd, seen: map[string]bool{}}
	if m, ok := raw.(map[string]any); ok {
		for k, v := range m {
			if p, ok := v.(string); ok && filepath.IsAbs(p) && (normKey(k) == "cwd" || normKey(k) == "workdir") {
				s.base = p
			}
		}
	}
	var locs []struct {
		Path string `json:"path"`
	}
	_ = json.Unmarshal(tc.Locations, &locs)
	for _, l := range locs {
		s.addPath(l.Path)
	}
	var content any
	_ = json.Unmarshal(tc.Content, &content)
	s.walk(content, "")
	s.walk(raw, "")
	return permission.Reach{Paths: s.paths, Command: joinCommands(s.commands)}
}

// joinCommands is the commands found, in a stable order, without those
// another one already contains (Codex repeats its argv's script in
// parsed_cmd).
func joinCommands(cs []string) string {
	slices.Sort(cs)
	var keep []string
	for i, c := range cs {
		dup := false
		for j, o := range cs {
			if j != i && strings.Contains(o, c) && (o != c || j < i) {
				dup = true
				break
			}
		}
		if !dup {
			keep = append(keep, c)
		}
	}
	return strings.Join(keep, "; ")
}

type reachScan struct {
	base     string
	paths    []string
	seen     map[string]bool
	commands []string
}

// walk reads v, found under key (normalised; "" at the top).
func (s *reachScan) walk(v any, key string) {
	switch {
	case reachPathKeys[key]:
		s.pathsIn(v)
		return
	case reachCommandKeys[key]:
		if c := commandText(v); c != "" {
			s.commands = append(s.commands, c)
			return
		}
	case key == "filesystem":
		s.allStrings(v)
		return
	case key == "uri" || key == "url":
		if str, ok := v.(string); ok {
			s.fileURL(str)
		}
		return
	}
	switch v := v.(type) {
	case map[string]any:
		if t, _ := v["type"].(string); t == "terminal" {
			id, _ := v["terminalId"].(string)
			s.commands = append(s.commands, "terminal "+id)
		}
		for k, x := range v {
			nk := normKey(k)
			if nk == "changes" {
				if m, ok := x.(map[string]any); ok {
					for p := range m {
						s.addPath(p)
					}
				}
			}
			s.walk(x, nk)
		}
	case []any:
		for _, x := range v {
			s.walk(x, key)
		}
	}
}

// pathsIn takes a path key's value: a string, a list of them, or an
// object read as any other.
func (s *reachScan) pathsIn(v any) {
	switch v := v.(type) {
	case string:
		s.addPath(v)
	case []any:
		for _, x := range v {
			s.pathsIn(x)
		}
	case map[string]any:
		s.walk(v, "")
	}
}

func (s *reachScan) allStrings(v any) {
	switch v := v.(type) {
	case string:
		s.addPath(v)
	case []any:
		for _, x := range v {
			s.allStrings(x)
		}
	case map[string]any:
		for _, x := range v {
			s.allStrings(x)
		}
	}
}

func (s *reachScan) fileURL(str string) {
	if u, err := url.Parse(str); err == nil && u.Scheme == "file" {
		s.addPath(u.Path)
	}
}

// addPath records p made absolute, without cleaning it: "link/.." must be
// judged where the link leads (permission.Within).
func (s *reachScan) addPath(p string) {
	if p == "" {
		return
	}
	if strings.HasPrefix(p, "file://") {
		s.fileURL(p)
		return
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			home = "/~" // unknown: judged as outside
		}
		p = home + p[1:]
	}
	if !filepath.IsAbs(p) {
		p = s.base + string(filepath.Separator) + p
	}
	if !s.seen[p] {
		s.seen[p] = true
		s.paths = append(s.paths, p)
	}
}

// commandText is a command value as one line: a string, or a list of
// strings (argv) joined by spaces.
func commandText(v any) string {
	switch v := v.(type) {
	case string:
		return strings.TrimSpace(v)
	case []any:
		var parts []string
		for _, x := range v {
			if str, ok := x.(string); ok {
				parts = append(parts, str)
			}
		}
		return strings.TrimSpace(strings.Join(parts, " "))
	}
	return ""
}
