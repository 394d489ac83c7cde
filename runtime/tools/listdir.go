package tools

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"strings"

	"github.com/openheim/openheim/runtime/confine"
	"github.com/openheim/openheim/runtime/llm"
)

// maxListEntries keeps a huge directory (node_modules, build output) from
// flooding the model's context.
const maxListEntries = 1000

// ListDir lists one directory level.
type ListDir struct {
	Root *confine.Root
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
	d, err := t.Root.OpenDir(p)
	if err != nil {
		return Errorf("%v", t.dirErr(err, p))
	}
	defer d.Close()
	// Entries are sorted by name, which keeps output stable across calls.
	entries, err := d.Entries()
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
			// model where the link points without following it.
			if target, err := d.Readlink(e.Name()); err == nil {
				b.WriteString(" -> " + target)
			}
		case e.IsDir():
			b.WriteByte('/')
		}
		b.WriteByte('\n')
	}
	return Result{Content: strings.TrimSuffix(b.String(), "\n")}
}

// dirErr words a failure to open directory p; only then is p looked at
// again to say what it is instead.
func (t *ListDir) dirErr(err error, p string) error {
	if errors.Is(err, confine.ErrOutside) {
		return err
	}
	fi, serr := t.Root.Stat(p)
	switch {
	case errors.Is(serr, fs.ErrNotExist):
		return errors.New("directory not found: " + p)
	case serr == nil && !fi.IsDir():
		return errors.New("'" + p + "' is not a directory; use read_file to read a file")
	}
	return errors.New("cannot list " + p + ": " + err.Error())
}
