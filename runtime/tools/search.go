package tools

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/openheim/openheim/runtime/confine"
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
	Root *confine.Root
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
	// The real name: results are named from it, and the .gitignore files
	// above it are those of where it really is.
	name, err := t.Root.Real(p)
	if err != nil {
		return Errorf("%v", err)
	}
	s := &searcher{root: t.Root, re: re, ctx: ctx}
	err = s.start(name, p)
	var refused *searchRefusal
	switch {
	case errors.As(err, &refused):
		return Errorf("%s", refused.msg)
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

// searchRefusal is a message for the model about the path it named.
type searchRefusal struct{ msg string }

func (e *searchRefusal) Error() string { return e.msg }

func refuse(format string, a ...any) error { return &searchRefusal{sprintf(format, a...)} }

// errEnoughResults stops the walk once one match past the cap proves that
// more exist.
var errEnoughResults = errors.New("enough results")

type searcher struct {
	root    *confine.Root
	re      *regexp.Regexp
	ctx     context.Context
	results []string
	more    bool
}

// start searches name (p as the model gave it): a directory is walked, a
// file named explicitly is searched even if hidden or ignored, as ripgrep
// does; only content it cannot sensibly grep is refused.
func (s *searcher) start(name, p string) error {
	fi, err := s.root.Stat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return refuse("path not found: %s", p)
	}
	if err != nil {
		return refuse("cannot search %s: %v", p, err)
	}
	if fi.IsDir() {
		d, err := s.root.OpenDir(name)
		if err != nil {
			return refuse("cannot search %s: %v", p, err)
		}
		defer d.Close()
		return s.walk(d, s.ancestorIgnores(name))
	}
	if fi.Size() > maxSearchFileSize {
		return refuse("cannot search %s: it is larger than %d MB", p, maxSearchFileSize>>20)
	}
	f, _, err := s.root.Open(name)
	if err != nil {
		return refuse("cannot search %s: %v", p, fileErr(nil, err, p))
	}
	defer f.Close()
	binary, err := s.file(f, name)
	if err == nil && binary {
		return refuse("cannot search %s: %v", p, errBinary)
	}
	return err
}

// ancestorIgnores loads the .gitignore files between the work directory and
// dir (exclusive), so searching a subdirectory honours rules set above it.
func (s *searcher) ancestorIgnores(dir string) ignoreStack {
	if dir == "." {
		return nil
	}
	var stack ignoreStack
	cur := "."
	for _, part := range strings.Split(dir, string(filepath.Separator)) {
		if d, err := s.root.OpenDir(cur); err == nil {
			if l := loadIgnoreLayer(d); l != nil {
				stack = append(stack, l)
			}
			d.Close()
		}
		cur = filepath.Join(cur, part)
	}
	return stack
}

// walk visits d in lexical order, through directory handles. Symlinks are
// never followed: they could lead out of the work directory or into a
// cycle.
func (s *searcher) walk(d *confine.Dir, stack ignoreStack) error {
	if err := s.ctx.Err(); err != nil {
		return err
	}
	if l := loadIgnoreLayer(d); l != nil {
		stack = append(stack[:len(stack):len(stack)], l)
	}
	entries, err := d.Entries()
	if err != nil {
		// An unreadable subdirectory should not sink the whole search.
		return nil
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		rel := filepath.Join(d.Name(), name)
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			continue
		case e.IsDir():
			if stack.ignored(rel, true) {
				continue
			}
			sub, err := d.Sub(name)
			if err != nil {
				continue // gone or replaced meanwhile
			}
			err = s.walk(sub, stack)
			sub.Close()
			if err != nil {
				return err
			}
		case e.Type().IsRegular():
			if stack.ignored(rel, false) {
				continue
			}
			if err := s.walkFile(d, e, rel); err != nil {
				return err
			}
		}
	}
	return nil
}

// walkFile greps one regular file met by the walk; only the end of the
// search or its cancellation is an error.
func (s *searcher) walkFile(d *confine.Dir, e fs.DirEntry, rel string) error {
	if info, err := e.Info(); err != nil || info.Size() > maxSearchFileSize {
		return nil
	}
	f, _, err := d.Open(e.Name())
	if err != nil {
		return nil // gone, or no longer a regular file
	}
	defer f.Close()
	if _, err := s.file(f, rel); err != nil && (errors.Is(err, errEnoughResults) || s.ctx.Err() != nil) {
		return err
	}
	return nil
}

// file greps one open file, named rel in results; binary files are
// skipped and reported as such.
func (s *searcher) file(f io.Reader, rel string) (binary bool, err error) {
	if err := s.ctx.Err(); err != nil {
		return false, err
	}
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
	shown := filepath.ToSlash(rel)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if !s.re.MatchString(line) {
			continue
		}
		if len(s.results) == maxSearchResults {
			s.more = true
			return false, errEnoughResults
		}
		s.results = append(s.results, sprintf("%s:%d: %s", shown, n, clipLine(line)))
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
