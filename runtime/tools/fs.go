package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// FS is where read_file, write_file and edit_file get and put file
// contents. An ACP editor can serve it (fs/read_text_file,
// fs/write_text_file) so the agent sees unsaved buffers and the editor sees
// the agent's edits.
//
// path is always absolute and has already been resolved and checked by the
// Sandbox: symlink escapes, directories and other non-files are refused on
// the local disk before an FS is asked, so an implementation never sees a
// path outside the work directory. list_dir and search always read the
// local disk.
type FS interface {
	ReadTextFile(ctx context.Context, path string) (string, error)
	WriteTextFile(ctx context.Context, path, content string) error
}

// DiskFS is the local file system, the FS used when none is given.
// WriteTextFile creates missing parent directories and replaces the file
// atomically, keeping an existing file's permission bits.
type DiskFS struct{}

// ReadTextFile returns the whole content of path.
func (DiskFS) ReadTextFile(_ context.Context, path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// WriteTextFile creates or replaces path with content.
func (DiskFS) WriteTextFile(_ context.Context, path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return &parentDirError{err}
	}
	return WriteFileAtomic(path, []byte(content))
}

// openText lets read_file stream a local file instead of loading it whole,
// so a multi-gigabyte log is paged in bounded memory as before.
func (DiskFS) openText(_ context.Context, path string) (io.ReadCloser, error) {
	return os.Open(path)
}

// textOpener is implemented by file systems that can stream content.
type textOpener interface {
	openText(ctx context.Context, path string) (io.ReadCloser, error)
}

// parentDirError marks a failure to create the parent directories, which
// write_file reports in its own words.
type parentDirError struct{ err error }

func (e *parentDirError) Error() string { return "cannot create parent directories: " + e.err.Error() }
func (e *parentDirError) Unwrap() error { return e.err }

func orDisk(f FS) FS {
	if f == nil {
		return DiskFS{}
	}
	return f
}

// openContent opens the checked path abs (p as the model gave it) through
// fsys. The error is the message for the model: a local open error as it
// always was, a client error as "cannot read <p>: <err>".
func openContent(ctx context.Context, fsys FS, abs, p string) (io.ReadCloser, error) {
	if o, ok := fsys.(textOpener); ok {
		return o.openText(ctx, abs)
	}
	text, err := fsys.ReadTextFile(ctx, abs)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", p, err)
	}
	return io.NopCloser(strings.NewReader(text)), nil
}

// writeContent writes content to the checked path abs through fsys and
// returns the failure message for the model, or nil.
func writeContent(ctx context.Context, fsys FS, abs, p, content string) *Result {
	err := fsys.WriteTextFile(ctx, abs, content)
	if err == nil {
		return nil
	}
	var pd *parentDirError
	if errors.As(err, &pd) {
		r := Errorf("cannot create parent directories of %s: %v", p, pd.err)
		return &r
	}
	r := Errorf("cannot write %s: %v", p, err)
	return &r
}
