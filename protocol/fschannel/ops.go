package fschannel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"unicode/utf8"

	"github.com/openheim/openheim/runtime/tools"
)

// list returns the entries of directory p in name order. Recursive lists
// walk depth first, each directory followed by its contents, and never
// follow symlinks (a link is listed as itself). Both kinds fail rather
// than truncate past c.maxList entries; see maxListEntries.
func (c *Channel) list(ctx context.Context, p string, recursive bool) ([]FileEntry, error) {
	abs, err := c.sb.Resolve(p)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("cannot list '%s': %s", p, reason(err))
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("cannot list '%s': not a directory", p)
	}
	tooMany := fmt.Errorf("cannot list '%s': more than %d entries; list a subdirectory or without recursive", p, c.maxList)
	entries := []FileEntry{}
	if !recursive {
		des, err := os.ReadDir(abs)
		if err != nil {
			return nil, fmt.Errorf("cannot list '%s': %s", p, reason(err))
		}
		if len(des) > c.maxList {
			return nil, tooMany
		}
		for _, d := range des {
			if info, err := d.Info(); err == nil { // gone meanwhile: skip
				entries = append(entries, entryOf(filepath.Join(abs, d.Name()), info))
			}
		}
		return entries, nil
	}
	err = filepath.WalkDir(abs, func(path string, d fs.DirEntry, err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			if path == abs {
				return err
			}
			return nil // an unreadable subdirectory is listed, its contents not
		}
		if path == abs {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil // gone meanwhile
		}
		if len(entries) == c.maxList {
			return tooMany
		}
		entries = append(entries, entryOf(path, info))
		return nil
	})
	switch {
	case err == tooMany:
		return nil, err
	case ctx.Err() != nil:
		return nil, fmt.Errorf("listing '%s' was cancelled", p)
	case err != nil:
		return nil, fmt.Errorf("cannot list '%s': %s", p, reason(err))
	}
	return entries, nil
}

func entryOf(path string, info fs.FileInfo) FileEntry {
	e := FileEntry{Path: path, Name: info.Name(), IsDir: info.IsDir(), Modified: info.ModTime().Unix()}
	if !e.IsDir {
		size := info.Size()
		e.Size = &size
	}
	return e
}

// read returns the content of text file p: a regular file of at most
// c.maxRead bytes holding valid UTF-8.
func (c *Channel) read(p string) (string, error) {
	abs, err := c.sb.Resolve(p)
	if err != nil {
		return "", err
	}
	// Checked before opening: opening a FIFO would block.
	if err := c.checkReadable(abs, p); err != nil {
		return "", err
	}
	f, err := os.Open(abs)
	if err != nil {
		return "", fmt.Errorf("cannot read '%s': %s", p, reason(err))
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, int64(c.maxRead)+1))
	if err != nil {
		return "", fmt.Errorf("cannot read '%s': %s", p, reason(err))
	}
	if len(data) > c.maxRead { // it grew since the check
		return "", fmt.Errorf("'%s' is too large to read (the limit is %d bytes)", p, c.maxRead)
	}
	if !utf8.Valid(data) {
		return "", fmt.Errorf("'%s' is not a text file (its content is not valid UTF-8)", p)
	}
	return string(data), nil
}

func (c *Channel) checkReadable(abs, p string) error {
	fi, err := os.Stat(abs)
	switch {
	case err != nil:
		return fmt.Errorf("cannot read '%s': %s", p, reason(err))
	case fi.IsDir():
		return fmt.Errorf("cannot read '%s': it is a directory", p)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("cannot read '%s': not a regular file", p)
	case fi.Size() > int64(c.maxRead):
		return fmt.Errorf("'%s' is too large to read (%d bytes; the limit is %d bytes)", p, fi.Size(), c.maxRead)
	}
	return nil
}

// write replaces (or creates) file p with content, creating missing parent
// directories. Writing through a symlink inside the work directory writes
// its target and keeps the link.
func (c *Channel) write(p, content string) error {
	abs, err := c.sb.Resolve(p)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(abs); err == nil && fi.IsDir() {
		return fmt.Errorf("cannot write '%s': it is a directory", p)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return fmt.Errorf("cannot create the parent directories of '%s': %s", p, reason(err))
	}
	if err := tools.WriteFileAtomic(abs, []byte(content)); err != nil {
		return fmt.Errorf("cannot write '%s': %s", p, reason(err))
	}
	return nil
}

// mkdir creates directory p and its missing parents, like mkdir -p.
func (c *Channel) mkdir(p string) error {
	abs, err := c.sb.Resolve(p)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return fmt.Errorf("cannot create directory '%s': %s", p, reason(err))
	}
	return nil
}

// remove deletes file p, or directory p and everything below it. A symlink
// is deleted itself, never its target.
func (c *Channel) remove(p string) error {
	abs, err := c.entry(p)
	if errors.Is(err, errRoot) {
		return errors.New("refusing to delete the work directory itself")
	}
	if err != nil {
		return err
	}
	fi, err := os.Lstat(abs)
	if err != nil {
		return fmt.Errorf("cannot delete '%s': %s", p, reason(err))
	}
	if fi.IsDir() {
		err = os.RemoveAll(abs)
	} else {
		err = os.Remove(abs)
	}
	if err != nil {
		return fmt.Errorf("cannot delete '%s': %s", p, reason(err))
	}
	return nil
}

// rename moves from to to, both confined. A symlink at either end is
// renamed or replaced itself. The parent directory of to must exist: a
// rename creating directories would be a surprise, and the client can
// mkdir first. An existing file at to is replaced, as rename(2) does.
func (c *Channel) rename(from, to string) error {
	src, err := c.entry(from)
	if errors.Is(err, errRoot) {
		return errors.New("refusing to rename the work directory itself")
	}
	if err != nil {
		return err
	}
	dst, err := c.entry(to)
	if errors.Is(err, errRoot) {
		return errors.New("refusing to rename onto the work directory itself")
	}
	if err != nil {
		return err
	}
	if _, err := os.Lstat(src); err != nil {
		return fmt.Errorf("cannot rename '%s': %s", from, reason(err))
	}
	if fi, err := os.Stat(filepath.Dir(dst)); err != nil || !fi.IsDir() {
		return fmt.Errorf("cannot rename to '%s': its parent directory does not exist", to)
	}
	if err := os.Rename(src, dst); err != nil {
		return fmt.Errorf("cannot rename '%s' to '%s': %s", from, to, reason(err))
	}
	return nil
}

var errRoot = errors.New("the work directory itself")

// entry maps p to the directory entry it names, for operations that act on
// the entry rather than on what it points to (delete, rename): the parent
// directory is resolved and confined by the sandbox, the last component is
// kept as is. So a symlink inside the work directory is deleted or renamed
// itself, even one pointing outside, and nothing outside is ever touched.
// It returns errRoot when p is the work directory.
func (c *Channel) entry(p string) (string, error) {
	abs := p
	if !filepath.IsAbs(p) {
		abs = filepath.Join(c.sb.Root, p)
	}
	abs = filepath.Clean(abs)
	if dir, base := filepath.Split(abs); base != "" {
		if parent, err := c.sb.Resolve(dir); err == nil {
			return filepath.Join(parent, base), nil
		}
	}
	// The parent is outside (or unresolvable): p is acceptable only as
	// the root itself, which the callers refuse.
	real, err := c.sb.Resolve(p)
	if err != nil {
		return "", err
	}
	if real == c.sb.Root {
		return "", errRoot
	}
	return "", fmt.Errorf("path '%s' is outside the work directory '%s'", p, c.sb.Root)
}

// reason strips the operation and path an os error repeats, which the
// messages above already name in the client's own terms.
func reason(err error) string {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return pe.Err.Error()
	case errors.As(err, &le):
		return le.Err.Error()
	}
	return err.Error()
}
