package tools

import (
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"

	"github.com/openheim/openheim/runtime/confine"
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
	a := parseArgs(raw)
	p := a.str("path", true)
	content := a.str("content", true)
	if err := a.Err(); err != nil {
		return Errorf("%v", err)
	}
	name, err := t.Root.Real(p)
	if err != nil {
		return Errorf("%v", err)
	}
	if name == "." {
		return Errorf("'%s' is the work directory, not a file", p)
	}
	if fi, err := t.Root.Stat(name); err == nil && fi.IsDir() {
		return Errorf("'%s' is a directory, not a file", p)
	}
	if r := writeContent(ctx, t.Root, t.FS, name, p, content); r != nil {
		return *r
	}
	return Result{Content: sprintf("Wrote %s to %s", plural(len(content), "byte", "bytes"), filepath.ToSlash(name))}
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
	a := parseArgs(raw)
	p := a.str("path", true)
	oldS := a.str("old_string", true)
	newS := a.str("new_string", true)
	all := a.boolean("replace_all")
	if err := a.Err(); err != nil {
		return Errorf("%v", err)
	}
	if oldS == "" {
		return Errorf("old_string is empty; use write_file to create a file or replace its whole content")
	}
	if oldS == newS {
		return Errorf("old_string and new_string are identical; nothing would change")
	}
	name, err := checkFile(t.Root, p)
	if err != nil {
		return Errorf("%v", err)
	}
	f, err := openContent(ctx, t.Root, t.FS, p, name)
	if err != nil {
		return Errorf("%v", err)
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return Errorf("cannot read %s: %v", p, err)
	}
	if looksBinary(data[:min(len(data), sniffLen)]) {
		return Errorf("cannot edit %s: %v", p, errBinary)
	}
	text := string(data)
	rel := filepath.ToSlash(name)
	n := strings.Count(text, oldS)
	switch {
	case n == 0:
		return Errorf("old_string not found in %s. It must match the file exactly, including whitespace and indentation; read the file again to copy the current text.", rel)
	case n > 1 && !all:
		return Errorf("old_string found %d times in %s; add surrounding context to make it unique, or set replace_all to true to replace every occurrence", n, rel)
	}
	if all {
		text = strings.ReplaceAll(text, oldS, newS)
	} else {
		text = strings.Replace(text, oldS, newS, 1)
	}
	if r := writeContent(ctx, t.Root, t.FS, name, p, text); r != nil {
		return *r
	}
	return Result{Content: sprintf("Replaced %s in %s", plural(n, "occurrence", "occurrences"), rel)}
}
