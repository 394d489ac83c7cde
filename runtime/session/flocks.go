package session

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/gofrs/flock"
)

// The lease's locks are file locks through gofrs/flock: flock(2)
// on unix, LockFileEx on Windows. They belong to an open file, so two
// opens exclude each other in one process as in two. On Windows the lock
// is mandatory for the first byte of the file: only files that nobody
// reads or writes are locked (.lock-guard, <id>.fence), never the data.

const (
	guardName = ".lock-guard"
	epochName = ".lock-epoch"
)

// fencePath is the file a session's fences lock, which a takeover waits on.
func fencePath(dir, id string) string { return filepath.Join(dir, id+".fence") }

// guardFile is this process's hold on a history dir's guard. The mutex
// serialises this process's holders: they wait on it rather than each in
// a blocking lock call, and one Flock value must not be used by two at once.
type guardFile struct {
	mu sync.Mutex
	fl *flock.Flock
}

var guards sync.Map // guard path -> *guardFile

// lockGuard holds the history dir's guard (path, the .lock-guard file)
// until unlock, across processes and within this one. The guard file is
// never removed: unlinking it would let two processes lock different
// inodes.
func lockGuard(path string) (unlock func(), err error) {
	g, _ := guards.LoadOrStore(path, &guardFile{fl: lockOf(path)})
	gf := g.(*guardFile)
	gf.mu.Lock()
	if err := lock(gf.fl); err != nil {
		gf.mu.Unlock()
		return nil, err
	}
	return func() {
		gf.fl.Unlock()
		gf.mu.Unlock()
	}, nil
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
	return inDir(filepath.Dir(path), func() error {
		f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o600)
		if err != nil {
			return err
		}
		return f.Close()
	})
}
