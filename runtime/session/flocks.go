package session

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"

	"github.com/gofrs/flock"
)

// The lease's locks are file locks through gofrs/flock: flock(2)
// on unix, LockFileEx on Windows. They belong to an open file, so two
// opens exclude each other in one process as in two. On Windows the lock
// is mandatory for the first byte of the file: only files that nobody
// reads or writes are locked there (<id>.fence), never the data.

// fencePath is the file a session's fences lock, which a takeover waits on:
// the lease file itself where the lock is flock(2), which belongs to one
// open of the file (it is rewritten in place, never replaced, so every
// locker locks the same file). A file of its own elsewhere: on Windows a
// locked byte cannot be read through another handle, and on AIX and
// Solaris gofrs/flock uses fcntl locks, which closing any other open of
// the file in the process would drop.
func fencePath(dir, id string) string {
	switch runtime.GOOS {
	case "windows", "aix", "solaris":
		return filepath.Join(dir, id+".fence")
	}
	return LockPath(dir, id)
}

// lockOf is the lock of the file at path, opened without O_CREATE: a
// creating open takes the directory's lock even when the file exists,
// and a server takes these locks on every step of every turn.
func lockOf(path string) *flock.Flock {
	return flock.New(path, flock.SetFlag(os.O_RDONLY), flock.SetPermissions(0o600))
}

// lock takes fl's exclusive lock, waiting for it, after creating its file
// if it is missing.
func lock(fl *flock.Flock) error {
	err := fl.Lock()
	if errors.Is(err, fs.ErrNotExist) {
		if err = createFile(fl.Path()); err == nil {
			err = fl.Lock()
		}
	}
	return err
}

// createFile makes the empty file at path unless it exists, in line with
// this process's other entry changes in its directory.
func createFile(path string) error {
	return inDir(filepath.Dir(path), func() error { return createEmpty(path, 0) })
}
