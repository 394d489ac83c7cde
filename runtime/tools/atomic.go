package tools

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFileAtomic replaces path through a temporary file in the same
// directory, synced, and a rename, so a crash, a watcher or a concurrent
// reader never sees a half-written file. An existing file keeps its
// permission bits; a new one gets 0644.
//
// It goes by path, for the files openheim keeps in its own data directory
// (the sessions API's registries and bundles). A path a user, a client or
// a model gives goes through confine.Root.WriteFile instead, which does the
// same relative to the work directory's handle.
func WriteFileAtomic(path string, data []byte) error {
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op once the rename succeeded
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(mode)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
