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

	"github.com/openheim/openheim/runtime/confine"
)

// list returns the entries of directory p in name order. Recursive lists
// walk depth first, each directory followed by its contents, through
// directory handles, and never follow symlinks (a link is listed as
// itself). Both kinds fail rather than truncate past c.maxList entries;
// see maxListEntries.
func (c *Channel) list(ctx context.Context, p string, recursive bool) ([]FileEntry, error) {
	// Entries are named after where p really is, links resolved.
	name, err := c.root.Real(p)
	if err != nil {
		return nil, err
	}
	d, err := c.root.OpenDir(name)
	if err != nil {
		return nil, c.listErr(err, name, p)
	}
	defer d.Close()
	tooMany := fmt.Errorf("cannot list '%s': more than %d entries; list a subdirectory or without recursive", p, c.maxList)
	entries := []FileEntry{}
	if !recursive {
		des, err := d.Entries()
		if err != nil {
			return nil, fmt.Errorf("cannot list '%s': %s", p, reason(err))
		}
		if len(des) > c.maxList {
			return nil, tooMany
		}
		for _, de := range des {
			if info, err := de.Info(); err == nil { // gone meanwhile: skip
				entries = append(entries, entryOf(c.root.Abs(filepath.Join(name, de.Name())), info))
			}
		}
		return entries, nil
	}
	err = d.Walk(func(n string, info fs.FileInfo) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if len(entries) == c.maxList {
			return tooMany
		}
		entries = append(entries, entryOf(c.root.Abs(n), info))
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

// listErr says why directory p (real name name) could not be opened.
func (c *Channel) listErr(err error, name, p string) error {
	if errors.Is(err, confine.ErrOutside) {
		return named(err, p)
	}
	fi, serr := c.root.Stat(name)
	switch {
	case serr != nil:
		return fmt.Errorf("cannot list '%s': %s", p, reason(serr))
	case !fi.IsDir():
		return fmt.Errorf("cannot list '%s': not a directory", p)
	}
	return fmt.Errorf("cannot list '%s': %s", p, reason(err))
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
	// Open refuses a FIFO, a device or a socket before it could block.
	f, fi, err := c.root.Open(p)
	switch {
	case errors.Is(err, confine.ErrOutside):
		return "", err
	case errors.Is(err, confine.ErrSpecial):
		return "", fmt.Errorf("cannot read '%s': not a regular file", p)
	case err != nil:
		return "", fmt.Errorf("cannot read '%s': %s", p, reason(err))
	}
	defer f.Close()
	switch {
	case fi.IsDir():
		return "", fmt.Errorf("cannot read '%s': it is a directory", p)
	case fi.Size() > int64(c.maxRead):
		return "", fmt.Errorf("'%s' is too large to read (%d bytes; the limit is %d bytes)", p, fi.Size(), c.maxRead)
	}
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

// write replaces (or creates) file p with content, creating missing parent
// directories. Writing through a symlink inside the work directory writes
// its target and keeps the link.
func (c *Channel) write(p, content string) error {
	fi, err := c.root.Stat(p)
	if err == nil && fi.IsDir() {
		return fmt.Errorf("cannot write '%s': it is a directory", p)
	}
	if real, rerr := c.root.Real(p); rerr == nil {
		// The watchers tell a replaced file from a new one by this.
		channelWrites.note(c.root.Abs(real), err == nil)
	}
	err = c.root.WriteFile(p, []byte(content))
	var pe *confine.ParentError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, confine.ErrOutside):
		return err
	case errors.As(err, &pe):
		return fmt.Errorf("cannot create the parent directories of '%s': %s", p, reason(pe.Err))
	}
	return fmt.Errorf("cannot write '%s': %s", p, reason(err))
}

// mkdir creates directory p and its missing parents, like mkdir -p.
func (c *Channel) mkdir(p string) error {
	err := c.root.MkdirAll(p, 0o755)
	if err != nil && !errors.Is(err, confine.ErrOutside) {
		return fmt.Errorf("cannot create directory '%s': %s", p, reason(err))
	}
	return err
}

// remove deletes file p, or directory p and everything below it. A symlink
// is deleted itself, never its target.
func (c *Channel) remove(p string) error {
	name, err := c.root.Name(p)
	if err != nil {
		return err
	}
	if name == "." {
		return errors.New("refusing to delete the work directory itself")
	}
	fi, err := c.root.Lstat(p)
	if err == nil {
		if fi.IsDir() {
			err = c.root.RemoveAll(p)
		} else {
			err = c.root.Remove(p)
		}
	}
	if err != nil && !errors.Is(err, confine.ErrOutside) {
		return fmt.Errorf("cannot delete '%s': %s", p, reason(err))
	}
	return err
}

// rename moves from to to, both confined. A symlink at either end is
// renamed or replaced itself, and stays confined where it lands: reading
// through it is judged again at every use. The parent directory of to
// must exist: a rename creating directories would be a surprise, and the
// client can mkdir first. An existing file at to is replaced, as rename(2)
// does.
func (c *Channel) rename(from, to string) error {
	fromName, err := c.root.Name(from)
	if err != nil {
		return err
	}
	if fromName == "." {
		return errors.New("refusing to rename the work directory itself")
	}
	toName, err := c.root.Name(to)
	if err != nil {
		return err
	}
	if toName == "." {
		return errors.New("refusing to rename onto the work directory itself")
	}
	if _, err := c.root.Lstat(from); err != nil {
		if errors.Is(err, confine.ErrOutside) {
			return err
		}
		return fmt.Errorf("cannot rename '%s': %s", from, reason(err))
	}
	if fi, err := c.root.Stat(filepath.Dir(toName)); err != nil || !fi.IsDir() {
		if errors.Is(err, confine.ErrOutside) {
			return named(err, to)
		}
		return fmt.Errorf("cannot rename to '%s': its parent directory does not exist", to)
	}
	if err := c.root.Rename(from, to); err != nil {
		if errors.Is(err, confine.ErrOutside) {
			return err
		}
		return fmt.Errorf("cannot rename '%s' to '%s': %s", from, to, reason(err))
	}
	return nil
}

// named makes a refusal name the client's path p.
func named(err error, p string) error {
	var oe *confine.OutsideError
	if errors.As(err, &oe) {
		oe.Path = p
	}
	return err
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
