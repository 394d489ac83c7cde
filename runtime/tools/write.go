package tools

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/openheim/openheim/runtime/llm"
)

// WriteFile creates or replaces a file.
type WriteFile struct {
	Sandbox *Sandbox
	// FS receives the content; nil means the local disk.
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
	abs, err := t.Sandbox.Resolve(p)
	if err != nil {
		return Errorf("%v", err)
	}
	if abs == t.Sandbox.Root {
		return Errorf("'%s' is the work directory, not a file", p)
	}
	if fi, err := os.Stat(abs); err == nil && fi.IsDir() {
		return Errorf("'%s' is a directory, not a file", p)
	}
	if r := writeContent(ctx, orDisk(t.FS), abs, p, content); r != nil {
		return *r
	}
	return Result{Content: sprintf("Wrote %s to %s", plural(len(content), "byte", "bytes"), t.Sandbox.Rel(abs))}
}

// WriteFileAtomic replaces path through a temporary file in the same
// directory, synced, and a rename, so a crash, a watcher or a concurrent
// reader never sees a half-written file. An existing file keeps its
// permission bits; a new one gets 0644. The file tools and the fs channel
// of /ws write through it.
func WriteFileAtomic(path string, data []byte) error {
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op once the rename succeeded
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(mode)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// EditFile replaces exact text in an existing file.
type EditFile struct {
	Sandbox *Sandbox
	// FS serves and receives the content; nil means the local disk.
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
	abs, err := t.Sandbox.Resolve(p)
	if err != nil {
		return Errorf("%v", err)
	}
	if err := checkRegular(abs, p); err != nil {
		return Errorf("%v", err)
	}
	fsys := orDisk(t.FS)
	f, err := openContent(ctx, fsys, abs, p)
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
	rel := t.Sandbox.Rel(abs)
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
	if r := writeContent(ctx, fsys, abs, p, text); r != nil {
		return *r
	}
	return Result{Content: sprintf("Replaced %s in %s", plural(n, "occurrence", "occurrences"), rel)}
}
