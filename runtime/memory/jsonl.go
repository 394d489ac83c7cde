package memory

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/openheim/openheim/runtime/atomicfile"
)

// jsonlFile follows an append-only JSONL file that several processes append
// to (under the exclusive lock) and occasionally replace whole (compaction,
// by temp file + rename). Callers hold the lock around every method.
type jsonlFile struct {
	path string
	f    *os.File // read handle on the file as last seen
	size int64    // end of the last complete line consumed
	torn int64    // where the torn tail last reported starts; -1 for none
	// resume, when set, is called with a file new to refresh (after reset)
	// and returns how much of it is already accounted for (0: read all).
	resume func(f *os.File, size int64) int64
}

func newJSONL(path string) *jsonlFile { return &jsonlFile{path: path, torn: -1} }

// refresh consumes the lines appended since the last call, by this process
// or another. When the file is new to it (first call, or replaced by a
// compaction, or shorter than what was consumed) it calls reset with its
// size and reads it from the start. A last line without its newline is a torn write from
// a crash (the caller's lock rules out a write in progress): it is left
// unconsumed, reported once, and cut off by the next append.
func (j *jsonlFile) refresh(reset func(size int64), line func(b []byte, off int64), warn func(string)) error {
	fi, err := os.Stat(j.path)
	if errors.Is(err, fs.ErrNotExist) {
		if j.f != nil || j.size > 0 {
			j.close()
			reset(0)
		}
		return nil
	}
	if err != nil {
		return err
	}
	if j.f == nil || fi.Size() < j.size || !j.same(fi) {
		j.close()
		reset(fi.Size())
		f, err := os.Open(j.path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		j.f = f
		if fi, err = f.Stat(); err != nil {
			return err
		}
		if j.resume != nil {
			j.size = j.resume(f, fi.Size())
		}
	}
	if fi.Size() == j.size {
		return nil
	}
	buf := make([]byte, fi.Size()-j.size)
	n, err := j.f.ReadAt(buf, j.size)
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	buf = buf[:n]
	end := bytes.LastIndexByte(buf, '\n') + 1
	for off := 0; off < end; {
		i := bytes.IndexByte(buf[off:], '\n')
		line(buf[off:off+i], j.size+int64(off))
		off += i + 1
	}
	j.size += int64(end)
	if end < len(buf) && j.torn != j.size {
		j.torn = j.size
		warn(fmt.Sprintf("memory: %s ends with a torn record (%d bytes, an interrupted write); ignoring it",
			filepath.Base(j.path), len(buf)-end))
	}
	return nil
}

func (j *jsonlFile) same(fi fs.FileInfo) bool {
	cur, err := j.f.Stat()
	return err == nil && os.SameFile(cur, fi)
}

func (j *jsonlFile) close() {
	if j.f != nil {
		_ = j.f.Close()
		j.f = nil
	}
	j.size = 0
	j.torn = -1
}

// readAt returns n bytes at off of the file as last refreshed. Compaction
// replaces the file rather than rewriting it, so offsets stay valid on this
// handle until the next refresh.
func (j *jsonlFile) readAt(off int64, n int) ([]byte, error) {
	if j.f == nil {
		return nil, errors.New("no file")
	}
	b := make([]byte, n)
	_, err := j.f.ReadAt(b, off)
	return b, err
}

// append writes whole lines at the end of what refresh consumed (cutting a
// torn tail off first) and fsyncs them. The caller holds the exclusive lock
// and refreshes afterwards to consume them.
func (j *jsonlFile) append(data []byte) error {
	f, err := os.OpenFile(j.path, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	created := j.f == nil
	err = f.Truncate(j.size)
	if err == nil {
		_, err = f.WriteAt(data, j.size)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && created {
		err = atomicfile.SyncDir(filepath.Dir(j.path))
	}
	return err
}

// replace writes a new version of the file with write and renames it into
// place durably (temp file, fsync, rename, directory fsync): a crash leaves
// either the old file or the new one. The caller holds the exclusive lock
// and refreshes afterwards.
func (j *jsonlFile) replace(write func(w *bufio.Writer) error) error {
	// Leftovers of a crashed compaction: with the lock held, no one else
	// can be writing one. (Versions before atomicfile named theirs
	// without the leading dot.)
	atomicfile.RemoveTemps(j.path)
	legacy, _ := filepath.Glob(filepath.Join(filepath.Dir(j.path), filepath.Base(j.path)+".tmp-*"))
	for _, o := range legacy {
		_ = os.Remove(o)
	}
	return atomicfile.Writer{}.WriteFrom(j.path, func(f io.Writer) error {
		w := bufio.NewWriterSize(f, 1<<20)
		if err := write(w); err != nil {
			return err
		}
		return w.Flush()
	})
}
