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

// A server saves a session's meta and takes and drops its lease on every
// turn. Allocating a new inode (creating a file) cost 0.1-0.3 ms of CPU on
// the ext4 of this project's machines, while renaming, linking and removing
// an entry cost ~10 µs. So files are recycled where that is safe: temp
// files never seen under a public name, and released leases (see
// removeFile). Entry changes in one directory go one at a time: threads
// spinning on the directory's kernel lock behind a slow creation burnt CPU.

var dirLocks sync.Map // dir -> *sync.Mutex

// inDir runs f, which changes entries of dir, alone among this process's
// entry changes in dir.
func inDir(dir string, f func() error) error {
	mu, _ := dirLocks.LoadOrStore(dir, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	return f()
}

// spareFiles holds a directory's spare files, private to this process
// (their names carry its pid).
type spareFiles struct {
	mu    sync.Mutex
	names []string
}

const (
	maxSpares   = 16
	sparePrefix = ".spare-"
)

var (
	spares   sync.Map // dir -> *spareFiles
	spareSeq atomic.Int64
)

func sparesOf(dir string) *spareFiles {
	p, _ := spares.LoadOrStore(dir, &spareFiles{})
	return p.(*spareFiles)
}

// spareName is a new name for a spare in dir.
func spareName(dir string) string {
	return filepath.Join(dir, fmt.Sprintf("%s%d-%d", sparePrefix, os.Getpid(), spareSeq.Add(1)))
}

// takeSpare opens an emptied spare for writing, or creates one.
func takeSpare(dir string) (*os.File, error) {
	p := sparesOf(dir)
	for {
		p.mu.Lock()
		n := len(p.names)
		if n == 0 {
			p.mu.Unlock()
			break
		}
		name := p.names[n-1]
		p.names = p.names[:n-1]
		p.mu.Unlock()
		if f, err := os.OpenFile(name, os.O_WRONLY|os.O_TRUNC, 0); err == nil {
			return f, nil
		}
	}
	var f *os.File
	err := inDir(dir, func() (err error) {
		f, err = os.OpenFile(spareName(dir), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		return err
	})
	return f, err
}

// giveSpare keeps the file at name as a spare if nothing else links it
// (another process replacing the same file may have kept it too), emptied
// so a spare never holds a copy of a session's data.
func giveSpare(dir, name string) {
	st, err := os.Lstat(name)
	p := sparesOf(dir)
	p.mu.Lock()
	keep := err == nil && linkCount(st) == 1 && len(p.names) < maxSpares
	if keep {
		keep = os.Truncate(name, 0) == nil
	}
	if keep {
		p.names = append(p.names, name)
	}
	p.mu.Unlock()
	if !keep {
		inDir(dir, func() error { return os.Remove(name) })
	}
}

// replaceFile writes data to path through atomicfile, with a spare for
// its temporary file and its entry changes in line with this process's
// others in dir (see above).
func replaceFile(path string, data []byte, sync atomicfile.Sync) error {
	dir := filepath.Dir(path)
	return atomicfile.Writer{
		Sync:  sync,
		Temp:  takeSpare,
		InDir: func(change func() error) error { return inDir(dir, change) },
	}.Write(path, data)
}

// removeFile removes path, keeping its file as a spare: a reader that
// opened it before may read its next use instead. Only for released
// leases: a fence reading one that is not its own refuses whatever it
// reads there (an empty file, another lease, a meta).
func removeFile(path string) error {
	dir := filepath.Dir(path)
	spare := spareName(dir)
	err := inDir(dir, func() error { return os.Rename(path, spare) })
	if err == nil {
		giveSpare(dir, spare)
	}
	return err
}

// SweepSpares removes the spare files in dir left by processes that are no
// longer running (a crash; a clean exit leaves at most a few, which later
// sweeps remove once it is gone).
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
