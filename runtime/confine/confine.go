// Package confine keeps every file operation inside one directory tree,
// the work directory, with the kernel doing the checking.
//
// It exists because checking a path and then opening it by name is a race:
// between the check and the open another process can swap a directory for
// a symlink to somewhere else, and the kernel follows the new link (measured
// on the old resolve-then-open code: about 15% of calls escaped under a
// tight race). A Root holds an open handle on the directory (os.Root) and
// performs every operation relative to it, one component at a time, so a
// link that leads out is refused at the moment of use, not at an earlier
// check. Special files (FIFOs, devices, sockets) are refused before any
// open that could block, and what was opened is checked again.
//
// Paths are taken as a user gives them: relative to the root, or absolute
// and inside it (also through another name of the root, such as a
// symlinked parent). A path that leaves the tree is refused with
// "path '<p>' is outside the work directory '<root>'". Symlinks that stay
// inside keep working, absolute ones included; a path that goes out
// through a link and comes back in is refused.
package confine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrOutside is matched (errors.Is) by every refusal of a path that leads
// out of the root.
var ErrOutside = errors.New("outside the work directory")

// ErrSpecial is matched (errors.Is) by a *SpecialError.
var ErrSpecial = errors.New("not a regular file or directory")

// OutsideError is a path refused because it leads out of the root.
type OutsideError struct {
	Path string // as the user gave it
	Root string // the root's path
}

func (e *OutsideError) Error() string {
	return fmt.Sprintf("path '%s' is outside the work directory '%s'", e.Path, e.Root)
}

// Is makes errors.Is(err, ErrOutside) hold.
func (e *OutsideError) Is(target error) bool { return target == ErrOutside }

// SpecialError is a FIFO, device, socket or other file that is neither a
// regular file nor a directory. Opening one can block forever (a FIFO
// without a writer) or never end (a device), so it is refused.
type SpecialError struct {
	Path string
	Mode fs.FileMode
}

func (e *SpecialError) Error() string {
	return fmt.Sprintf("'%s' is %s, not a regular file or directory", e.Path, kindOf(e.Mode))
}

// Is makes errors.Is(err, ErrSpecial) hold.
func (e *SpecialError) Is(target error) bool { return target == ErrSpecial }

func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "a special file"
}

// Root is an open work directory. Its methods are safe for concurrent use.
type Root struct {
	path string      // absolute, free of symlinks
	root *os.Root    // the handle every operation goes through
	info fs.FileInfo // the directory itself, to recognise it by another name
}

// Open opens dir (empty: the current directory) as a Root.
func Open(dir string) (*Root, error) {
	abs, err := filepath.Abs(dir)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return nil, fmt.Errorf("work directory %q: %w", dir, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("work directory %q: %w", dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("work directory %q is not a directory", dir)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("work directory %q: %w", dir, err)
	}
	// The identity of what was opened, not of what the name led to before.
	if fi, err = root.Stat("."); err != nil {
		root.Close()
		return nil, fmt.Errorf("work directory %q: %w", dir, err)
	}
	return &Root{path: abs, root: root, info: fi}, nil
}

// Path is the root's absolute, symlink-free path: for messages, for a
// child process's working directory, for events naming files. Never open
// a file by a path built from it; use the methods of Root.
func (r *Root) Path() string { return r.path }

// Close releases the handle. A Root that is not closed is released by the
// garbage collector.
func (r *Root) Close() error { return r.root.Close() }

// Name maps a user's path to a clean name relative to the root ("." for
// the root itself). It is lexical, apart from recognising the root under
// another name: links in the path are followed, inside the root only, by
// the operation that uses the name.
func (r *Root) Name(p string) (string, error) {
	if strings.IndexByte(p, 0) >= 0 {
		return "", fmt.Errorf("path %q contains a NUL byte", p)
	}
	abs := filepath.Clean(p)
	if !filepath.IsAbs(p) {
		abs = filepath.Join(r.path, p)
	}
	if rel, ok := r.within(abs); ok {
		return rel, nil
	}
	if rel, ok := r.alias(abs); ok {
		return rel, nil
	}
	return "", r.outside(p)
}

// within maps a clean absolute path lexically below the root's path.
func (r *Root) within(abs string) (string, bool) {
	if abs == r.path {
		return ".", true
	}
	prefix := r.path
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	if rest, ok := strings.CutPrefix(abs, prefix); ok {
		return rest, true
	}
	return "", false
}

// alias recognises the root reached by another name (a symlinked parent,
// /tmp for /private/tmp): an ancestor of abs that is the root directory
// itself. Only the ancestors are looked at by name, and only to compare
// them with the open root; the rest is then used through the root.
func (r *Root) alias(abs string) (string, bool) {
	for dir := abs; ; {
		if fi, err := os.Stat(dir); err == nil && os.SameFile(fi, r.info) {
			rest := strings.TrimPrefix(strings.TrimPrefix(abs, dir), string(filepath.Separator))
			if rest == "" {
				return ".", true
			}
			return rest, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// Abs is the absolute path of a root-relative name, for messages and
// events.
func (r *Root) Abs(name string) string { return filepath.Join(r.path, name) }

// Rel returns abs relative to the root for messages (slash-separated), or
// abs itself when it is not below the root.
func (r *Root) Rel(abs string) string {
	rel, ok := r.within(filepath.Clean(abs))
	if !ok {
		return abs
	}
	return filepath.ToSlash(rel)
}

func (r *Root) outside(p string) error { return &OutsideError{Path: p, Root: r.path} }

// Real is the name of what p leads to, every symlink in it resolved
// through the root (a missing tail kept as given). It names things (the
// file a message talks about, the paths of events); it checks nothing that
// the next operation does not check again, since the tree may change in
// between.
func (r *Root) Real(p string) (string, error) {
	name, err := r.Name(p)
	if err != nil {
		return "", err
	}
	real, err := r.resolve(name, true)
	if err != nil {
		return "", r.pathErr(err, p)
	}
	return real, nil
}
