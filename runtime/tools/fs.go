package tools

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/openheim/openheim/runtime/confine"
)

// FS is where read_file, write_file and edit_file get and put file
// contents when the local disk is not the last word: an ACP editor serves
// it (fs/read_text_file, fs/write_text_file) so the agent sees unsaved
// buffers and the editor sees the agent's edits.
//
// path is always absolute: the work directory's path joined with the real
// name of the file, which was checked through the confinement root (links
// resolved inside it, anything outside refused, directories and special
// files refused on the local disk) before the FS is asked. An
// implementation never sees a path outside the work directory. Without an
// FS the tools read and write the disk through the root itself; list_dir
// and search always do.
type FS interface {
	ReadTextFile(ctx context.Context, path string) (string, error)
	WriteTextFile(ctx context.Context, path, content string) error
}

// checkFile explains, in terms the model can act on, why p is not a
// readable file, and returns its real name otherwise. It looks at the
// local disk whatever FS serves the content: the work directory is shared
// with the editor, and a FIFO or device must never be handed to anyone.
func checkFile(root *confine.Root, p string) (string, error) {
	name, err := root.Real(p)
	if err != nil {
		return "", err
	}
	fi, err := root.Stat(name)
	if err := fileErr(fi, err, p); err != nil {
		return "", err
	}
	return name, nil
}

// fileErr words a failed Stat or Open of the file p, or a directory where
// a file was wanted.
func fileErr(fi fs.FileInfo, err error, p string) error {
	var se *confine.SpecialError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errors.New("file not found: " + p)
	case errors.As(err, &se):
		se.Path = p
		return se
	case err != nil:
		return err
	case fi.IsDir():
		return errors.New("'" + p + "' is a directory, not a file; use list_dir to see its contents")
	case !fi.Mode().IsRegular():
		return &confine.SpecialError{Path: p, Mode: fi.Mode()}
	}
	return nil
}

// openContent opens the content of p through the root, or asks fsys for
// it; name is p's real name when the caller has checked it already, or "".
// The error is the message for the model: a local failure worded by
// fileErr, a client error as "cannot read <p>: <err>".
func openContent(ctx context.Context, root *confine.Root, fsys FS, p, name string) (io.ReadCloser, error) {
	at := cmp.Or(name, p)
	if fsys == nil {
		f, fi, err := root.Open(at)
		if err == nil && fi.IsDir() {
			f.Close()
		}
		if err := fileErr(fi, err, p); err != nil {
			return nil, err
		}
		return f, nil
	}
	if name == "" {
		var err error
		if name, err = checkFile(root, p); err != nil {
			return nil, err
		}
	}
	text, err := fsys.ReadTextFile(ctx, root.Abs(name))
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", p, err)
	}
	return io.NopCloser(strings.NewReader(text)), nil
}

// writeContent writes content to the real name name (p as the model gave
// it) through the root or fsys, and returns the failure message for the
// model, or nil. The disk write creates missing parent directories and
// replaces the file atomically, keeping an existing file's permission
// bits.
func writeContent(ctx context.Context, root *confine.Root, fsys FS, name, p, content string) *Result {
	var err error
	if fsys == nil {
		err = root.WriteFile(name, []byte(content))
	} else {
		err = fsys.WriteTextFile(ctx, root.Abs(name), content)
	}
	if err == nil {
		return nil
	}
	var pe *confine.ParentError
	if errors.As(err, &pe) {
		r := Errorf("cannot create parent directories of %s: %v", p, pe.Err)
		return &r
	}
	var oe *confine.OutsideError
	if errors.As(err, &oe) { // the tree changed since the check
		oe.Path = p
		r := Errorf("%v", err)
		return &r
	}
	r := Errorf("cannot write %s: %v", p, err)
	return &r
}
