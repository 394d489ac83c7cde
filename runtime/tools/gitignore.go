package tools

import (
	"io"
	"path/filepath"
	"strings"

	gitignore "github.com/sabhiram/go-gitignore"

	"github.com/openheim/openheim/runtime/confine"
)

// ignoreRule is one .gitignore line. go-gitignore compiles whole files and
// only answers "ignored or not" for them, which cannot express git's rule
// that a deeper .gitignore (including its "!" lines) overrides a shallower
// one. Each line is therefore compiled on its own and the precedence is
// applied here: the last matching rule across all layers wins.
type ignoreRule struct {
	match  *gitignore.GitIgnore
	negate bool
}

// ignoreLayer holds the rules of the .gitignore in dir (a name relative to
// the work directory); its patterns are relative to dir.
type ignoreLayer struct {
	dir   string
	rules []ignoreRule
}

// loadIgnoreLayer reads .gitignore in d; it returns nil when there is none
// or it is not a regular file (a link, which could lead anywhere).
func loadIgnoreLayer(d *confine.Dir) *ignoreLayer {
	fi, err := d.Lstat(".gitignore")
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	f, _, err := d.Open(".gitignore")
	if err != nil {
		return nil
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return nil
	}
	l := &ignoreLayer{dir: d.Name()}
	for _, line := range strings.Split(string(data), "\n") {
		if r, ok := parseIgnoreLine(line); ok {
			l.rules = append(l.rules, r)
		}
	}
	if len(l.rules) == 0 {
		return nil
	}
	return l
}

func parseIgnoreLine(line string) (ignoreRule, bool) {
	line = strings.TrimRight(line, "\r")
	line = strings.TrimRight(line, " ")
	if line == "" || strings.HasPrefix(line, "#") {
		return ignoreRule{}, false
	}
	negate := false
	if strings.HasPrefix(line, "!") {
		negate = true
		line = line[1:]
	}
	// go-gitignore would read a second "!" as another negation; escaping it
	// keeps git's meaning of a literal "!".
	if strings.HasPrefix(line, "!") {
		line = `\` + line
	}
	// git anchors a pattern with a slash before its end to the .gitignore's
	// directory; go-gitignore matches it at any depth unless it starts
	// with "/".
	if i := strings.Index(strings.TrimSuffix(line, "/"), "/"); i > 0 && !strings.HasPrefix(line, "**/") {
		line = "/" + line
	}
	if line == "" || line == "/" {
		return ignoreRule{}, false
	}
	return ignoreRule{match: gitignore.CompileIgnoreLines(line), negate: negate}, true
}

// ignoreStack is the .gitignore layers from the outermost directory to the
// one being walked.
type ignoreStack []*ignoreLayer

// ignored reports whether name (relative to the work directory, a
// directory when isDir) is excluded.
func (s ignoreStack) ignored(name string, isDir bool) bool {
	ignored := false
	for _, l := range s {
		rel, err := filepath.Rel(l.dir, name)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		rel = filepath.ToSlash(rel)
		// A trailing slash lets directory-only patterns ("build/") match
		// the directory itself but not a file of the same name.
		if isDir {
			rel += "/"
		}
		for _, r := range l.rules {
			if r.match.MatchesPath(rel) {
				ignored = !r.negate
			}
		}
	}
	return ignored
}
