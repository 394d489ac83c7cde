package session

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/openheim/openheim/runtime/atomicfile"
)

// Entry changes in one directory (creating, renaming, removing a file) go
// one at a time within a process: threads spinning on the directory's
// kernel lock behind a slow creation (0.1-0.3 ms of CPU on the ext4 of
// this project's machines) burnt CPU. A turn makes none once its session
// has run one (leases are rewritten in place, see writeLease); saving a
// meta makes a temporary file and renames it.

var dirLocks sync.Map // dir -> *sync.Mutex

// inDir runs f, which changes entries of dir, alone among this process's
// entry changes in dir.
func inDir(dir string, f func() error) error {
	mu, _ := dirLocks.LoadOrStore(dir, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	return f()
}

const sparePrefix = ".spare-"

var spareSeq atomic.Int64

// newTemp creates a temporary file in dir for replaceFile, named so that
// SweepSpares can tell one a crash left behind (the name carries the pid).
func newTemp(dir string) (*os.File, error) {
	name := filepath.Join(dir, fmt.Sprintf("%s%d-%d", sparePrefix, os.Getpid(), spareSeq.Add(1)))
	var f *os.File
	err := inDir(dir, func() (err error) {
		f, err = os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		return err
	})
	return f, err
}

// replaceFile writes data to path through atomicfile, its entry changes
// in line with this process's others in dir (see above).
func replaceFile(path string, data []byte, sync atomicfile.Sync) error {
	dir := filepath.Dir(path)
	return atomicfile.Writer{
		Sync:  sync,
		Temp:  newTemp,
		InDir: func(change func() error) error { return inDir(dir, change) },
	}.Write(path, data)
}

// SweepSpares removes the temporary files in dir left by processes that
// are no longer running (killed between creating one and renaming it).
func SweepSpares(dir string) (int, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), sparePrefix)
		if !ok {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid == os.Getpid() || (canProbePIDs && pidAlive(pid)) {
			continue
		}
		if os.Remove(filepath.Join(dir, e.Name())) == nil {
			n++
		}
	}
	return n, nil
}
