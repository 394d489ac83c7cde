package confine

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// errEscape marks a resolution that leaves the root; it becomes an
// *OutsideError naming the user's path.
var errEscape = errors.New("path escapes the root")

// maxLinks bounds the links one resolution follows, as the kernel does.
const maxLinks = 40

// isEscape recognises os.Root's refusal of a name that leads out of the
// root (an absolute link, or ".." above the root). os keeps that error
// unexported; TestEscapeErrorRecognised pins its text.
func isEscape(err error) bool {
	for ; err != nil; err = errors.Unwrap(err) {
		if err == errEscape || err.Error() == "path escapes from parent" {
			return true
		}
	}
	return false
}

// at runs op on p's name. os.Root refuses every absolute link and every
// ".." above the root, even when the link points back inside; then the
// name is resolved through the root and op runs once more on the result,
// so such links keep working. Whatever still leads out is an
// *OutsideError. followLast says whether op follows a link at the end.
func (r *Root) at(p string, followLast bool, op func(name string) error) error {
	name, err := r.Name(p)
	if err != nil {
		return err
	}
	err = op(name)
	if isEscape(err) {
		real, rerr := r.resolve(name, followLast)
		switch {
		case rerr != nil:
			err = rerr
		case real == name:
			err = errEscape
		default:
			err = op(real)
		}
	}
	return r.pathErr(err, p)
}

// pathErr names the user's path in err, in place of the root-relative one.
func (r *Root) pathErr(err error, p string) error {
	if err == nil {
		return nil
	}
	if isEscape(err) {
		return r.outside(p)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		pe.Path = p
	}
	return err
}

// resolve follows every link of name (the last one only with followLast)
// through the root, each step an Lstat or Readlink relative to the root
// handle. Missing components are kept as they are. It fails with
// errEscape when the path leads out, even if it would come back in.
func (r *Root) resolve(name string, followLast bool) (string, error) {
	const sep = string(filepath.Separator)
	resolved := "" // free of links, relative to the root; "" is the root
	rest := name
	links := 0
	for rest != "" {
		var comp string
		comp, rest, _ = strings.Cut(rest, sep)
		switch comp {
		case "", ".":
			continue
		case "..":
			if resolved == "" {
				return "", errEscape
			}
			resolved = parentName(resolved)
			continue
		}
		next := filepath.Join(resolved, comp)
		if rest == "" && !followLast {
			resolved = next
			break
		}
		fi, err := r.root.Lstat(next)
		switch {
		case err == nil && fi.Mode()&fs.ModeSymlink != 0:
			if links++; links > maxLinks {
				return "", syscall.ELOOP
			}
			target, err := r.root.Readlink(next)
			if err != nil {
				return "", err
			}
			if filepath.IsAbs(target) {
				rel, ok := r.within(filepath.Clean(target))
				if !ok {
					rel, ok = r.alias(filepath.Clean(target))
				}
				if !ok {
					return "", errEscape
				}
				resolved, target = "", rel
			}
			if rest != "" {
				target += sep + rest
			}
			rest = target
		case err == nil, errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
			resolved = next
		default:
			return "", err
		}
	}
	if resolved == "" {
		return ".", nil
	}
	return resolved, nil
}

func parentName(name string) string {
	if d := filepath.Dir(name); d != "." {
		return d
	}
	return ""
}

// Stat describes what p leads to.
func (r *Root) Stat(p string) (fs.FileInfo, error) {
	var fi fs.FileInfo
	err := r.at(p, true, func(name string) (err error) {
		fi, err = r.root.Stat(name)
		return err
	})
	return fi, err
}

// Lstat describes p itself: a link at the end is not followed.
func (r *Root) Lstat(p string) (fs.FileInfo, error) {
	var fi fs.FileInfo
	err := r.at(p, false, func(name string) (err error) {
		fi, err = r.root.Lstat(name)
		return err
	})
	return fi, err
}

// Open opens p for reading, and returns what was opened as seen on the
// open file. Only a regular file or a directory is opened: anything else
// is a *SpecialError, refused without an open that could block.
func (r *Root) Open(p string) (*os.File, fs.FileInfo, error) {
	var f *os.File
	var fi fs.FileInfo
	err := r.at(p, true, func(name string) (err error) {
		f, fi, err = openIn(r.root, name, p)
		return err
	})
	return f, fi, err
}

// openIn opens name below root for reading, refusing special files.
func openIn(root *os.Root, name, p string) (*os.File, fs.FileInfo, error) {
	fi, err := root.Stat(name)
	if err != nil {
		return nil, nil, err
	}
	if !openable(fi.Mode()) {
		return nil, nil, &SpecialError{Path: p, Mode: fi.Mode()}
	}
	// Should a FIFO be swapped in after the Stat, O_NONBLOCK makes the
	// open return at once, and the Stat of the open file refuses it.
	f, err := root.OpenFile(name, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil, nil, err
	}
	if fi, err = f.Stat(); err == nil && !openable(fi.Mode()) {
		err = &SpecialError{Path: p, Mode: fi.Mode()}
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

func openable(m fs.FileMode) bool { return m.IsRegular() || m.IsDir() }

// ParentError is a failure to create the parent directories of a file
// being written.
type ParentError struct{ Err error }

func (e *ParentError) Error() string { return "cannot create parent directories: " + e.Err.Error() }
func (e *ParentError) Unwrap() error { return e.Err }

// WriteFile replaces the content of p, creating it and its missing parent
// directories (mode 0755; a failure there is a *ParentError). A link at p that stays
// inside is followed and kept: its target is written. The content goes to
// a temporary file in the same directory, synced, then renamed over p, all
// through one handle on that directory, so no reader ever sees half a
// file. An existing file keeps its permission bits; a new one gets 0644.
func (r *Root) WriteFile(p string, data []byte) error {
	name, err := r.Name(p)
	if err != nil {
		return err
	}
	if name, err = r.target(name); err != nil {
		return r.pathErr(err, p)
	}
	if name == "." {
		return &fs.PathError{Op: "write", Path: p, Err: syscall.EISDIR}
	}
	dir, base := filepath.Dir(name), filepath.Base(name)
	// The parent is judged again here: the tree may have changed since.
	if err := r.MkdirAll(dir, 0o755); err != nil {
		if errors.Is(err, ErrOutside) {
			return r.outside(p)
		}
		return &ParentError{Err: err}
	}
	d, err := r.OpenDir(dir)
	if errors.Is(err, ErrOutside) {
		return r.outside(p)
	}
	if err != nil {
		return err
	}
	defer d.Close()
	h, err := d.handle()
	if err != nil {
		return err
	}
	return r.pathErr(writeAtomic(h, base, data), p)
}

// target is name with a link at its end followed, inside the root only.
func (r *Root) target(name string) (string, error) {
	fi, err := r.root.Lstat(name)
	if (err == nil && fi.Mode()&fs.ModeSymlink == 0) || errors.Is(err, fs.ErrNotExist) {
		return name, nil
	}
	return r.resolve(name, true)
}

// writeAtomic writes base in directory d through a temporary file. It is
// not runtime/atomicfile, which works by path: here every step (the
// temporary's creation, the rename) must go through d, the handle the
// confinement holds, or a directory swapped for a symlink between steps
// would take the write outside the root.
func writeAtomic(d *os.Root, base string, data []byte) error {
	mode := fs.FileMode(0o644)
	switch fi, err := d.Stat(base); {
	case err == nil && fi.IsDir():
		return &fs.PathError{Op: "write", Path: base, Err: syscall.EISDIR}
	case err == nil && !fi.Mode().IsRegular():
		return &SpecialError{Path: base, Mode: fi.Mode()}
	case err == nil:
		mode = fi.Mode().Perm()
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	tmp := fmt.Sprintf(".%s.tmp-%d", base, rand.Uint64())
	f, err := d.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = d.Rename(tmp, base)
	}
	if err != nil {
		d.Remove(tmp)
	}
	return err
}

// Create creates the new file p for writing, with mode 0600; it fails if
// p exists, even as a link. For streams that are renamed into place once
// complete (see Rename).
func (r *Root) Create(p string) (*os.File, error) {
	var f *os.File
	err := r.at(p, false, func(name string) (err error) {
		f, err = r.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		return err
	})
	return f, err
}

// MkdirAll creates directory p and its missing parents with mode perm
// (before the umask), like mkdir -p. A file in the way is "not a
// directory".
func (r *Root) MkdirAll(p string, perm fs.FileMode) error {
	err := r.at(p, true, func(name string) error { return r.root.MkdirAll(name, perm) })
	if errors.Is(err, fs.ErrExist) {
		// os.Root says "file exists" where os.MkdirAll and mkdir -p say
		// what is wrong with it.
		err = &fs.PathError{Op: "mkdir", Path: p, Err: syscall.ENOTDIR}
	}
	return err
}

// Remove removes the file, link or empty directory p itself; a link is
// removed, never its target.
func (r *Root) Remove(p string) error {
	return r.at(p, false, func(name string) error { return r.root.Remove(name) })
}

// RemoveAll removes p and everything below it; a link is removed, never
// followed. A missing p is not an error.
func (r *Root) RemoveAll(p string) error {
	return r.at(p, false, func(name string) error { return r.root.RemoveAll(name) })
}

// Rename moves the entry from (a link is moved itself) to to, replacing
// what is there as rename(2) does. Both ends are confined.
func (r *Root) Rename(from, to string) error {
	fromName, err := r.Name(from)
	if err != nil {
		return err
	}
	toName, err := r.Name(to)
	if err != nil {
		return err
	}
	err = r.root.Rename(fromName, toName)
	if isEscape(err) {
		f, ferr := r.resolve(fromName, false)
		if ferr != nil {
			return r.pathErr(ferr, from)
		}
		t, terr := r.resolve(toName, false)
		if terr != nil {
			return r.pathErr(terr, to)
		}
		err = errEscape
		if f != fromName || t != toName {
			err = r.root.Rename(f, t)
		}
	}
	if isEscape(err) {
		return r.outside(from)
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		le.Old, le.New = from, to
	}
	return err
}
