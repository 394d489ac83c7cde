package tools

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/openheim/openheim/runtime/llm"
)

// maxListEntries keeps a huge directory (node_modules, build output) from
// flooding the model's context.
const maxListEntries = 1000

// ListDir lists one directory level.
type ListDir struct {
	Sandbox *Sandbox
}

func (*ListDir) Spec() llm.ToolSpec {
	return spec(listDirName, listDirDescription, listDirParams)
}

func (*ListDir) Kind() string { return KindRead }

func (t *ListDir) Run(ctx context.Context, raw json.RawMessage) Result {
	a := parseArgs(raw)
	p := a.str("path", false)
	if err := a.Err(); err != nil {
		return Errorf("%v", err)
	}
	abs, err := t.Sandbox.Resolve(p)
	if err != nil {
		return Errorf("%v", err)
	}
	fi, err := os.Stat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return Errorf("directory not found: %s", p)
	}
	if err != nil {
		return Errorf("cannot list %s: %v", p, err)
	}
	if !fi.IsDir() {
		return Errorf("'%s' is not a directory; use read_file to read a file", p)
	}
	// os.ReadDir sorts by name, which keeps output stable across calls.
	entries, err := os.ReadDir(abs)
	if err != nil {
		return Errorf("cannot list %s: %v", p, err)
	}
	if len(entries) == 0 {
		return Result{Content: "(empty directory)"}
	}
	var b strings.Builder
	for i, e := range entries {
		if i == maxListEntries {
			b.WriteString(sprintf("[... %d more entries not shown]\n", len(entries)-maxListEntries))
			break
		}
		b.WriteString(e.Name())
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			// The raw target is shown, not a resolved one: it tells the
			// model where the link points without following it out of
			// the sandbox.
			if target, err := os.Readlink(filepath.Join(abs, e.Name())); err == nil {
				b.WriteString(" -> " + target)
			}
		case e.IsDir():
			b.WriteByte('/')
		}
		b.WriteByte('\n')
	}
	return Result{Content: strings.TrimSuffix(b.String(), "\n")}
}
