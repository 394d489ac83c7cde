package session

import (
	"os"
	"path/filepath"
	"sync"
)

// Creating, renaming and removing a directory entry takes the directory's
// lock in the kernel. With hundreds of turns saving at once (a server),
// threads spinning on that lock burnt a third of the CPU; a Go mutex per
// directory parks them instead. Reads and appends to existing files need
// no entry change and are not serialised.
var dirLocks sync.Map // dir -> *sync.Mutex

// inDir runs f, which changes entries of dir, alone among this process's
// entry changes in dir.
func inDir(dir string, f func() error) error {
	mu, _ := dirLocks.LoadOrStore(dir, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	return f()
}

// replaceFile writes data to path by temp file and rename, so a reader
// sees the old content or the new, never half. durable syncs the content
// first (a crash then cannot leave an empty file behind the rename);
// syncParent also makes the rename itself survive a crash.
func replaceFile(path string, data []byte, durable, syncParent bool) error {
	dir := filepath.Dir(path)
	var tmp *os.File
	err := inDir(dir, func() (err error) {
		tmp, err = os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
		return err
	})
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	if werr == nil && durable {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp.Name(), 0o600)
	}
	if werr == nil {
		werr = inDir(dir, func() error { return os.Rename(tmp.Name(), path) })
	}
	if werr != nil {
		inDir(dir, func() error { return os.Remove(tmp.Name()) })
		return werr
	}
	if !syncParent {
		return nil
	}
	return syncDir(dir)
}
