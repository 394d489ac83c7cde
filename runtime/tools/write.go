package tools

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/openheim/openheim/runtime/confine"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm"
)

// WriteFile creates or replaces a file.
type WriteFile struct {
	Root *confine.Root
	// FS receives the content; nil means the local disk, through Root.
	FS FS
}

func (*WriteFile) Spec() llm.ToolSpec {
	return spec(writeFileName, writeFileDescription, writeFileParams)
}

func (*WriteFile) Kind() string { return KindEdit }

func (t *WriteFile) Run(ctx context.Context, raw json.RawMessage) Result {
	p, name, content, r := t.parse(raw)
	if r != nil {
		return *r
	}
	// No Change: it would cost reading the file again (through the
	// editor, with an FS); the loop shows the call's preview instead.
	if r := writeContent(ctx, t.Root, t.FS, name, p, content); r != nil {
		return *r
	}
	return Result{Content: sprintf("Wrote %s to %s", plural(len(content), "byte", "bytes"), filepath.ToSlash(name))}
}

// Preview implements Previewer: the new file, or the diff against the
// file it replaces.
func (t *WriteFile) Preview(ctx context.Context, raw json.RawMessage) *Change {
	p, name, content, r := t.parse(raw)
	if r != nil {
		return nil
	}
	return t.change(ctx, p, name, content)
}

// parse checks a call's arguments: the path as given, its real name and
// the content; r is the failure otherwise.
func (t *WriteFile) parse(raw json.RawMessage) (p, name, content string, r *Result) {
	fail := func(format string, a ...any) (string, string, string, *Result) {
		res := Errorf(format, a...)
		return "", "", "", &res
	}
	a := parseArgs(raw)
	p = a.str("path", true)
	content = a.str("content", true)
	if err := a.Err(); err != nil {
		return fail("%v", err)
	}
	name, err := t.Root.Real(p)
	if err != nil {
		return fail("%v", err)
	}
	if name == "." {
		return fail("'%s' is the work directory, not a file", p)
	}
	if fi, err := t.Root.Stat(name); err == nil && fi.IsDir() {
		return fail("'%s' is a directory, not a file", p)
	}
	return p, name, content, nil
}

// change is what writing content to name would change: a new file, or the
// diff against the text there now; nil when either side is too large to
// show or the file there is not text.
func (t *WriteFile) change(ctx context.Context, p, name, content string) *Change {
	if len(content) > maxPreviewBytes {
		return nil
	}
	abs := t.Root.Abs(name)
	if _, err := t.Root.Lstat(name); errors.Is(err, fs.ErrNotExist) {
		return &Change{Diff: event.Diff{Path: abs, NewText: content}, Line: 1}
	}
	old, ok := readForPreview(ctx, t.Root, t.FS, p, name)
	if !ok || len(old) > maxPreviewBytes {
		return nil
	}
	return &Change{Diff: event.Diff{Path: abs, OldText: &old, NewText: content}, Line: firstChange(old, content)}
}

// EditFile replaces exact text in an existing file.
type EditFile struct {
	Root *confine.Root
	// FS serves and receives the content; nil means the local disk,
	// through Root.
	FS FS
}

func (*EditFile) Spec() llm.ToolSpec {
	return spec(editFileName, editFileDescription, editFileParams)
}

func (*EditFile) Kind() string { return KindEdit }

func (t *EditFile) Run(ctx context.Context, raw json.RawMessage) Result {
	e, r := t.plan(ctx, raw)
	if r != nil {
		return *r
	}
	if r := writeContent(ctx, t.Root, t.FS, e.name, e.p, e.after); r != nil {
		return *r
	}
	return Result{Content: sprintf("Replaced %s in %s", plural(e.n, "occurrence", "occurrences"), filepath.ToSlash(e.name)),
		Change: e.change(t.Root)}
}

// Preview implements Previewer: the file before and after the
// replacement.
func (t *EditFile) Preview(ctx context.Context, raw json.RawMessage) *Change {
	e, r := t.plan(ctx, raw)
	if r != nil {
		return nil
	}
	return e.change(t.Root)
}

// edit is an edit_file call worked out, not yet written.
type edit struct {
	p, name       string // the path as given, its real name
	oldS, newS    string
	before, after string // the file's text
	n             int    // occurrences replaced
}

// plan reads the file and applies the replacement in memory; r is the
// failure the model sees otherwise.
func (t *EditFile) plan(ctx context.Context, raw json.RawMessage) (*edit, *Result) {
	fail := func(format string, a ...any) (*edit, *Result) {
		res := Errorf(format, a...)
		return nil, &res
	}
	a := parseArgs(raw)
	p := a.str("path", true)
	oldS := a.str("old_string", true)
	newS := a.str("new_string", true)
	all := a.boolean("replace_all")
	if err := a.Err(); err != nil {
		return fail("%v", err)
	}
	if oldS == "" {
		return fail("old_string is empty; use write_file to create a file or replace its whole content")
	}
	if oldS == newS {
		return fail("old_string and new_string are identical; nothing would change")
	}
	name, err := checkFile(t.Root, p)
	if err != nil {
		return fail("%v", err)
	}
	f, err := openContent(ctx, t.Root, t.FS, p, name)
	if err != nil {
		return fail("%v", err)
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return fail("cannot read %s: %v", p, err)
	}
	if looksBinary(data[:min(len(data), sniffLen)]) {
		return fail("cannot edit %s: %v", p, errBinary)
	}
	text := string(data)
	rel := filepath.ToSlash(name)
	n := strings.Count(text, oldS)
	switch {
	case n == 0:
		return fail("old_string not found in %s. It must match the file exactly, including whitespace and indentation; read the file again to copy the current text.", rel)
	case n > 1 && !all:
		return fail("old_string found %d times in %s; add surrounding context to make it unique, or set replace_all to true to replace every occurrence", n, rel)
	}
	e := &edit{p: p, name: name, oldS: oldS, newS: newS, before: text, n: n}
	if all {
		e.after = strings.ReplaceAll(text, oldS, newS)
	} else {
		e.after = strings.Replace(text, oldS, newS, 1)
	}
	return e, nil
}

// change is the edit as a diff: the whole file before and after, or for
// a file too large to carry whole the strings replaced.
func (e *edit) change(root *confine.Root) *Change {
	abs := root.Abs(e.name)
	if len(e.before) > maxPreviewBytes || len(e.after) > maxPreviewBytes {
		oldS := e.oldS
		line := strings.Count(e.before[:strings.Index(e.before, e.oldS)], "\n") + 1
		return &Change{Diff: event.Diff{Path: abs, OldText: &oldS, NewText: e.newS}, Line: line}
	}
	before := e.before
	return &Change{Diff: event.Diff{Path: abs, OldText: &before, NewText: e.after}, Line: firstChange(e.before, e.after)}
}
