package tools

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/openheim/openheim/runtime/llm"
)

const (
	// maxSearchResults is the cap promised in the search description.
	maxSearchResults = 200
	// maxSearchLineRunes keeps one minified line from eating the budget.
	maxSearchLineRunes = 500
	// maxSearchFileSize skips generated blobs and logs nobody greps.
	maxSearchFileSize = 10 << 20
)

// Search greps the work directory the way ripgrep does by default.
type Search struct {
	Sandbox *Sandbox
}

func (*Search) Spec() llm.ToolSpec {
	return spec(searchName, searchDescription, searchParams)
}

func (*Search) Kind() string { return KindSearch }

func (t *Search) Run(ctx context.Context, raw json.RawMessage) Result {
	a := parseArgs(raw)
	pattern := a.str("pattern", true)
	p := a.str("path", false)
	fold := a.boolean("case_insensitive")
	if err := a.Err(); err != nil {
		return Errorf("%v", err)
	}
	if pattern == "" {
		return Errorf("pattern is empty")
	}
	expr := pattern
	if fold {
		expr = "(?i)" + pattern
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return Errorf("invalid regex pattern %q: %v", pattern, err)
	}
	abs, err := t.Sandbox.Resolve(p)
	if err != nil {
		return Errorf("%v", err)
	}
	fi, err := os.Stat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return Errorf("path not found: %s", p)
	}
	if err != nil {
		return Errorf("cannot search %s: %v", p, err)
	}

	s := &searcher{sb: t.Sandbox, re: re, ctx: ctx}
	if fi.IsDir() {
		err = s.walk(abs, s.ancestorIgnores(abs))
	} else {
		// A file named explicitly is searched even if hidden or ignored,
		// as ripgrep does; only content it cannot sensibly grep is refused.
		if fi.Size() > maxSearchFileSize {
			return Errorf("cannot search %s: it is larger than %d MB", p, maxSearchFileSize>>20)
		}
		var binary bool
		binary, err = s.file(abs)
		if err == nil && binary {
			return Errorf("cannot search %s: %v", p, errBinary)
		}
	}
	switch {
	case errors.Is(err, errEnoughResults):
	case err != nil && ctx.Err() != nil:
		return Errorf("search cancelled")
	case err != nil:
		return Errorf("search failed: %v", err)
	}
	if len(s.results) == 0 {
		return Result{Content: "No matches found."}
	}
	out := strings.Join(s.results, "\n")
	if s.more {
		out += sprintf("\n[... more than %d matches; showing the first %d. Narrow the pattern or path to see the rest.]", maxSearchResults, maxSearchResults)
	}
	return Result{Content: out}
}

// errEnoughResults stops the walk once one match past the cap proves that
// more exist.
var errEnoughResults = errors.New("enough results")

type searcher struct {
	sb      *Sandbox
	re      *regexp.Regexp
	ctx     context.Context
	results []string
	more    bool
}

// ancestorIgnores loads the .gitignore files between the work directory and
// dir (exclusive), so searching a subdirectory honours rules set above it.
func (s *searcher) ancestorIgnores(dir string) ignoreStack {
	var stack ignoreStack
	rel, err := filepath.Rel(s.sb.Root, dir)
	if err != nil || rel == "." {
		return nil
	}
	cur := s.sb.Root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		if l := loadIgnoreLayer(cur); l != nil {
			stack = append(stack, l)
		}
		cur = filepath.Join(cur, part)
	}
	return stack
}

// walk visits dir in lexical order. Symlinks are never followed: they could
// lead out of the sandbox or into a cycle.
func (s *searcher) walk(dir string, stack ignoreStack) error {
	if err := s.ctx.Err(); err != nil {
		return err
	}
	if l := loadIgnoreLayer(dir); l != nil {
		stack = append(stack[:len(stack):len(stack)], l)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		// An unreadable subdirectory should not sink the whole search.
		return nil
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		path := filepath.Join(dir, name)
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			continue
		case e.IsDir():
			if stack.ignored(path, true) {
				continue
			}
			if err := s.walk(path, stack); err != nil {
				return err
			}
		case e.Type().IsRegular():
			if stack.ignored(path, false) {
				continue
			}
			if info, err := e.Info(); err != nil || info.Size() > maxSearchFileSize {
				continue
			}
			if _, err := s.file(path); err != nil {
				if errors.Is(err, errEnoughResults) || s.ctx.Err() != nil {
					return err
				}
			}
		}
	}
	return nil
}

// file greps one file; binary files are skipped and reported as such.
func (s *searcher) file(path string) (binary bool, err error) {
	if err := s.ctx.Err(); err != nil {
		return false, err
	}
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	head, err := br.Peek(sniffLen)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return false, err
	}
	if looksBinary(head) {
		return true, nil
	}
	sc := bufio.NewScanner(br)
	// Files are capped at maxSearchFileSize, so any line fits.
	sc.Buffer(make([]byte, 0, 64<<10), maxSearchFileSize+1)
	rel := s.sb.Rel(path)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if !s.re.MatchString(line) {
			continue
		}
		if len(s.results) == maxSearchResults {
			s.more = true
			return false, errEnoughResults
		}
		s.results = append(s.results, sprintf("%s:%d: %s", rel, n, clipLine(line)))
	}
	return false, sc.Err()
}

func clipLine(line string) string {
	if utf8.RuneCountInString(line) <= maxSearchLineRunes {
		return line
	}
	i, n := 0, 0
	for i = range line {
		if n == maxSearchLineRunes {
			break
		}
		n++
	}
	return line[:i] + " [... line truncated]"
}
