package confine

import (
	"errors"
	"fmt"
	"io"
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
// swapping a directory above it changes nothing. A Dir is for one
// goroutine; close it when done, before its parent.
type Dir struct {
	f    *os.File // the directory itself, opened with O_DIRECTORY
	name string   // relative to the Root, for messages and events

	// The handle its entries are reached through, made on first use: a
	// listing alone needs only f.
	parent *os.Root
	child  string
	root   *os.Root
	err    error
}

// OpenDir opens directory p. Anything else is refused without blocking:
// a FIFO is never opened.
func (r *Root) OpenDir(p string) (*Dir, error) {
	var d *Dir
	err := r.at(p, true, func(name string) (err error) {
		d, err = openDir(r.root, name, name)
		return err
	})
	return d, err
}

// openDir opens directory name below parent. O_DIRECTORY refuses anything
// but a directory before opening it, so a FIFO swapped in cannot block.
func openDir(parent *os.Root, name, shown string) (*Dir, error) {
	f, err := parent.OpenFile(name, os.O_RDONLY|oDirectory|oNonblock, 0)
	if err != nil {
		return nil, err
	}
	return &Dir{f: f, name: shown, parent: parent, child: name}, nil
}

// handle is the directory's own os.Root.
func (d *Dir) handle() (*os.Root, error) {
	if d.root == nil && d.err == nil {
		d.root, d.err = rootOf(d.f, d.parent, d.child)
	}
	return d.root, d.err
}

// Name is the directory's name relative to the Root ("." for the root).
func (d *Dir) Name() string { return d.name }

// Close releases the handles.
func (d *Dir) Close() error {
	if d.root != nil {
		d.root.Close()
	}
	return d.f.Close()
}

// Entries lists the directory in name order. Each entry's Info is the
// Lstat made through the directory's handle while listing (what os does
// for a directory opened in a Root), never one by path.
func (d *Dir) Entries() ([]fs.DirEntry, error) {
	if _, err := d.f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	des, err := d.f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(des, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return des, nil
}

// Lstat describes the entry name itself.
func (d *Dir) Lstat(name string) (fs.FileInfo, error) {
	h, err := d.at(name)
	if err != nil {
		return nil, err
	}
	return h.Lstat(name)
}

// Readlink returns the target of the link name, as written.
func (d *Dir) Readlink(name string) (string, error) {
	h, err := d.at(name)
	if err != nil {
		return "", err
	}
	return h.Readlink(name)
}

// Open opens the entry name for reading, a regular file or a directory
// only, like Root.Open.
func (d *Dir) Open(name string) (*os.File, fs.FileInfo, error) {
	h, err := d.at(name)
	if err != nil {
		return nil, nil, err
	}
	return openIn(h, name, d.join(name))
}

// Sub opens the subdirectory name. A link is refused, even one to a
// directory: walks never follow links (they could loop).
func (d *Dir) Sub(name string) (*Dir, error) {
	fi, err := d.Lstat(name)
	if err != nil {
		return nil, err
	}
	return d.sub(name, fi)
}

// at checks that name is one entry of the directory, not a path, and
// returns the handle to reach it through.
func (d *Dir) at(name string) (*os.Root, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsRune(name, filepath.Separator) || strings.IndexByte(name, 0) >= 0 {
		return nil, fmt.Errorf("%q is not the name of a directory entry", name)
	}
	return d.handle()
}

// sub opens name, listed as fi, and makes sure it is still that directory.
func (d *Dir) sub(name string, fi fs.FileInfo) (*Dir, error) {
	if !fi.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: d.join(name), Err: errors.New("not a directory")}
	}
	h, err := d.at(name)
	if err != nil {
		return nil, err
	}
	s, err := openDir(h, name, d.join(name))
	if err != nil {
		return nil, err
	}
	if now, err := s.f.Stat(); err != nil || !os.SameFile(fi, now) {
		s.Close()
		return nil, &fs.PathError{Op: "open", Path: d.join(name), Err: errChanged}
	}
	return s, nil
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
