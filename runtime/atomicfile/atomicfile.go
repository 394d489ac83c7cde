// Package atomicfile replaces the files openheim keeps in its data
// directory, by path: the content goes to a temporary file in the same
// directory, which is synced and renamed over the file, and then the
// directory is synced. A reader, a watcher or a crash sees the old content
// or the new, never a mix, and once Write returns the new content survives
// a crash.
//
// A path that a user, a client or a model names goes through
// confine.Root.WriteFile instead, which does the same relative to the work
// directory's handle (a path string can be swapped under a check).
package atomicfile

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Sync says what a write makes durable.
type Sync int

const (
	// SyncAll syncs the file before the rename and the directory after it.
	SyncAll Sync = iota
	// SyncFile syncs only the file: a crash may undo the rename, leaving
	// the previous complete content. For rewrites whose loss costs nothing
	// (a session's meta, rewritten every turn), since each directory sync
	// is a journal commit that stalls every other file creation there.
	SyncFile
	// SyncNone syncs nothing: for files that die with the process that
	// wrote them (a turn's lease).
	SyncNone
)

// Write replaces path with data, durably (SyncAll), with mode perm.
func Write(path string, data []byte, perm fs.FileMode) error {
	return Writer{Perm: perm}.Write(path, data)
}

// Writer replaces files; its zero value is Write's with mode 0600.
type Writer struct {
	// Perm is the file's mode (0: 0600). It is set on the temporary file,
	// so the file never has another one, whatever it had before.
	Perm fs.FileMode
	Sync Sync
	// Check, when set, runs on the complete temporary file before it
	// replaces path (a config is loaded from it): an error leaves path as
	// it was and is returned.
	Check func(tmp string) error
	// NoReplace creates path only if it does not exist (a hard link): the
	// error is then fs.ErrExist. Where the file system has no hard links
	// it falls back to a rename.
	NoReplace bool
	// Temp, when set, opens the temporary file in dir (the session store
	// recycles files instead of creating one per write); the caller has
	// set its mode. By default a new one is created.
	Temp func(dir string) (*os.File, error)
	// InDir, when set, runs each change of dir's entries (the rename, a
	// removal) for the caller to order them with its own.
	InDir func(change func() error) error
}

// Write replaces path with data.
func (w Writer) Write(path string, data []byte) error {
	return w.WriteFrom(path, func(f io.Writer) error {
		_, err := f.Write(data)
		return err
	})
}

// WriteFrom replaces path with what fill writes (buffer it: every write
// goes to the file).
func (w Writer) WriteFrom(path string, fill func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	tmp, err := w.temp(dir, path)
	if err != nil {
		return err
	}
	name, closed := tmp.Name(), false
	defer func() {
		if !closed {
			tmp.Close()
		}
		if err != nil || w.NoReplace {
			w.inDir(func() error { return os.Remove(name) })
		}
	}()
	if err = fill(tmp); err != nil {
		return err
	}
	if w.Sync != SyncNone {
		if err = tmp.Sync(); err != nil {
			return err
		}
	}
	closed = true
	if err = tmp.Close(); err != nil {
		return err
	}
	if w.Check != nil {
		if err = w.Check(name); err != nil {
			return err
		}
	}
	if err = w.commit(name, path); err != nil {
		return err
	}
	if w.Sync == SyncAll {
		return SyncDir(dir)
	}
	return nil
}

// temp opens the temporary file: a dot file named after path, so a
// directory listing, a watcher or a sweep can tell it for what it is.
func (w Writer) temp(dir, path string) (*os.File, error) {
	if w.Temp != nil {
		return w.Temp(dir)
	}
	var f *os.File
	err := w.inDir(func() (err error) {
		f, err = os.CreateTemp(dir, tempPrefix(path)+"*")
		return err
	})
	if err != nil {
		return nil, err
	}
	perm := w.Perm
	if perm == 0 {
		perm = 0o600
	}
	// CreateTemp made it 0600. Windows has only a read-only bit.
	if err := f.Chmod(perm); err != nil && runtime.GOOS != "windows" {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return f, nil
}

func (w Writer) commit(tmp, path string) error {
	if w.NoReplace {
		err := w.inDir(func() error { return os.Link(tmp, path) })
		if err == nil || os.IsExist(err) {
			return err
		}
		// No hard links on this file system: a rename, which could
		// replace a file another process made meanwhile.
	}
	return w.inDir(func() error { return os.Rename(tmp, path) })
}

func (w Writer) inDir(change func() error) error {
	if w.InDir != nil {
		return w.InDir(change)
	}
	return change()
}

// tempPrefix is how the temporary files of path begin.
func tempPrefix(path string) string { return "." + filepath.Base(path) + ".tmp-" }

// RemoveTemps removes the temporary files of path that a crash left (only
// while no one writes path: the caller holds the lock its writers take).
func RemoveTemps(path string) {
	dir, prefix := filepath.Dir(path), tempPrefix(path)
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
