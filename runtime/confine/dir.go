package confine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// errChanged is a directory that was replaced between being listed and
// being opened.
var errChanged = errors.New("changed while being read")

// Dir is an open directory inside a Root, for walking a tree one handle at
// a time: its entries, files and subdirectories are reached through the
// directory's own handle, never by a path from the top, so moving or
// swapping a directory above it changes nothing. Close it when done.
type Dir struct {
	root *os.Root
	name string // relative to the Root, for messages and events
}

// OpenDir opens directory p. Anything else is refused without blocking:
// a FIFO is never opened.
func (r *Root) OpenDir(p string) (*Dir, error) {
	var d *Dir
	err := r.at(p, true, func(name string) error {
		h, err := openDir(r.root, name)
		if err == nil {
			d = &Dir{root: h, name: name}
		}
		return err
	})
	return d, err
}

// openDir opens directory name below parent as a handle of its own.
// O_DIRECTORY refuses anything but a directory before opening it, so a
// FIFO swapped in cannot block.
func openDir(parent *os.Root, name string) (*os.Root, error) {
	f, err := parent.OpenFile(name, os.O_RDONLY|oDirectory|oNonblock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return rootOf(f, parent, name)
}

// Name is the directory's name relative to the Root ("." for the root).
func (d *Dir) Name() string { return d.name }

// Close releases the handle.
func (d *Dir) Close() error { return d.root.Close() }

// child checks that name is one entry of the directory, not a path.
func child(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsRune(name, filepath.Separator) || strings.IndexByte(name, 0) >= 0 {
		return fmt.Errorf("%q is not the name of a directory entry", name)
	}
	return nil
}

// Entries lists the directory in name order. Each entry's Info is an
// Lstat through the directory's handle.
func (d *Dir) Entries() ([]fs.DirEntry, error) {
	f, err := d.root.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	des, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	out := make([]fs.DirEntry, len(des))
	for i, de := range des {
		out[i] = entry{de, d}
	}
	slices.SortFunc(out, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return out, nil
}

// entry takes its Info from the directory handle: os.File's entries would
// Lstat by the directory's path, which another process could redirect.
type entry struct {
	fs.DirEntry
	d *Dir
}

func (e entry) Info() (fs.FileInfo, error) { return e.d.root.Lstat(e.Name()) }

// Lstat describes the entry name itself.
func (d *Dir) Lstat(name string) (fs.FileInfo, error) {
	if err := child(name); err != nil {
		return nil, err
	}
	return d.root.Lstat(name)
}

// Readlink returns the target of the link name, as written.
func (d *Dir) Readlink(name string) (string, error) {
	if err := child(name); err != nil {
		return "", err
	}
	return d.root.Readlink(name)
}

// Open opens the entry name for reading, a regular file or a directory
// only, like Root.Open.
func (d *Dir) Open(name string) (*os.File, fs.FileInfo, error) {
	if err := child(name); err != nil {
		return nil, nil, err
	}
	return openIn(d.root, name, d.join(name))
}

// Sub opens the subdirectory name. A link is refused, even one to a
// directory: walks never follow links (they could loop).
func (d *Dir) Sub(name string) (*Dir, error) {
	if err := child(name); err != nil {
		return nil, err
	}
	fi, err := d.root.Lstat(name)
	if err != nil {
		return nil, err
	}
	return d.sub(name, fi)
}

// sub opens name, listed as fi, and makes sure it is still that directory.
func (d *Dir) sub(name string, fi fs.FileInfo) (*Dir, error) {
	if !fi.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: d.join(name), Err: errors.New("not a directory")}
	}
	h, err := openDir(d.root, name)
	if err != nil {
		return nil, err
	}
	if now, err := h.Stat("."); err != nil || !os.SameFile(fi, now) {
		h.Close()
		return nil, &fs.PathError{Op: "open", Path: d.join(name), Err: errChanged}
	}
	return &Dir{root: h, name: d.join(name)}, nil
}

func (d *Dir) join(name string) string { return filepath.Join(d.name, name) }

// Walk calls fn for every entry below d, depth first in name order, with
// the entry's name relative to the Root and its Lstat. A directory is
// entered after fn returns nil for it; fs.SkipDir skips it and fs.SkipAll
// ends the walk (Walk then returns nil). Links are never followed. Only a
// failure to list d itself is returned: a subdirectory that vanished, was
// swapped or cannot be read is reported to fn and left out.
func (d *Dir) Walk(fn func(name string, fi fs.FileInfo) error) error {
	err := d.walk(fn, true)
	if err == fs.SkipAll {
		return nil
	}
	return err
}

func (d *Dir) walk(fn func(name string, fi fs.FileInfo) error, top bool) error {
	ents, err := d.Entries()
	if err != nil {
		if top {
			return err
		}
		return nil
	}
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			continue // gone meanwhile
		}
		switch err := fn(d.join(e.Name()), fi); {
		case err == fs.SkipDir:
			continue
		case err != nil:
			return err
		case !fi.IsDir():
			continue
		}
		sub, err := d.sub(e.Name(), fi)
		if err != nil {
			continue
		}
		err = sub.walk(fn, false)
		sub.Close()
		if err != nil {
			return err
		}
	}
	return nil
}
