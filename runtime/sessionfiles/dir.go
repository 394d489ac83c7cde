package sessionfiles

import (
	"cmp"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/openheim/openheim/runtime/confine"
	"github.com/openheim/openheim/runtime/ids"
	"github.com/openheim/openheim/runtime/storeerr"
)

// Dir keeps each session's files as dir/<session uuid>/<id>.bin with the
// File beside it as <id>.json. The .json is written last, so a file is
// listed only once its content is complete. Every operation goes through a
// root on dir, so no name built from a request can reach anything else.
type Dir struct {
	root     *confine.Root
	maxBytes int64
	now      func() time.Time
	mu       sync.Mutex // orders commits, removals and listings; uploads stream outside it
}

var _ Store = (*Dir)(nil)

// A leading dot marks a temporary (confine.Root.WriteFile's too), which
// OpenDir sweeps: one left by a crash is unreachable.
const tempPrefix = ".upload-"

// OpenDir opens (creating) the store in dir. Files over maxBytes are
// refused; now stamps created_at.
func OpenDir(dir string, maxBytes int64, now func() time.Time) (*Dir, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	root, err := confine.Open(dir)
	if err != nil {
		return nil, err
	}
	s := &Dir{root: root, maxBytes: maxBytes, now: now}
	s.sweep()
	return s, nil
}

// sweep removes the temporaries a crash left in the session directories.
func (s *Dir) sweep() {
	d, err := s.root.OpenDir(".")
	if err != nil {
		return
	}
	defer d.Close()
	d.Walk(func(name string, fi fs.FileInfo) error {
		dir, base := filepath.Split(name)
		switch {
		case dir == "" && fi.IsDir():
			return nil // a session directory: look inside
		case dir != "" && strings.HasPrefix(base, ".") && fi.Mode().IsRegular():
			s.root.Remove(name)
		}
		return fs.SkipDir
	})
}

// sessionDir is the name of the directory of a session's files, relative
// to the store's root. The uuid must round-trip through uuid.Parse in
// canonical form: it becomes a path component, and "../x" or an
// alternative spelling must not.
func sessionDir(sessionUUID string) (string, error) {
	u, err := uuid.Parse(sessionUUID)
	if err != nil || u.String() != sessionUUID {
		return "", fmt.Errorf("sessionfiles: %q is not a canonical session uuid", sessionUUID)
	}
	return sessionUUID, nil
}

// Put implements Store.
func (s *Dir) Put(sessionUUID string, up Upload, r io.Reader) (File, error) {
	dir, err := sessionDir(sessionUUID)
	if err != nil {
		return File{}, err
	}
	name, err := cleanName(up.Filename)
	if err != nil {
		return File{}, err
	}
	if err := s.root.MkdirAll(dir, 0o700); err != nil {
		return File{}, err
	}
	tmpName := filepath.Join(dir, tempPrefix+rand.Text())
	defer s.root.Remove(tmpName) // a no-op once renamed
	n, head, err := s.receive(tmpName, r)
	if err != nil {
		return File{}, err
	}
	f := File{
		ID: ids.New(IDPrefix), Object: "session.resource", Type: "file", SessionID: up.SessionID, Name: name,
		Metadata: Meta{Filename: name, Bytes: n, CreatedAt: s.now().Unix(), ContentType: contentType(up.ContentType, name, head)},
	}
	meta, err := json.Marshal(f)
	if err != nil {
		return File{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	bin := filepath.Join(dir, f.ID+".bin")
	if err := s.root.Rename(tmpName, bin); err != nil {
		return File{}, err
	}
	if err := s.root.WriteFile(filepath.Join(dir, f.ID+".json"), meta); err != nil {
		s.root.Remove(bin)
		return File{}, err
	}
	return f, nil
}

// receive streams r into the new file tmpName, synced, and returns its
// size and first bytes (for sniffing without holding the whole upload).
func (s *Dir) receive(tmpName string, r io.Reader) (n int64, head []byte, err error) {
	tmp, err := s.root.Create(tmpName)
	if err != nil {
		return 0, nil, err
	}
	src := &uploadReader{r: r}
	n, err = io.Copy(tmp, io.LimitReader(src, s.maxBytes+1))
	if err == nil && n > s.maxBytes {
		err = storeerr.TooLarge("file is over %d bytes", s.maxBytes)
	} else if err != nil && src.err != nil {
		err = storeerr.Body("reading the file part", src.err)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	return n, src.head, err
}

// uploadReader keeps the first bytes and a read error, to tell the
// client's broken body (their fault) from a failed disk write (ours).
type uploadReader struct {
	r    io.Reader
	head []byte
	err  error
}

func (u *uploadReader) Read(p []byte) (int, error) {
	n, err := u.r.Read(p)
	if k := min(n, 512-len(u.head)); k > 0 {
		u.head = append(u.head, p[:k]...)
	}
	if err != nil && err != io.EOF {
		u.err = err
	}
	return n, err
}

// List implements Store.
func (s *Dir) List(sessionUUID string) ([]File, error) {
	dir, err := sessionDir(sessionUUID)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.root.OpenDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return []File{}, nil
	} else if err != nil {
		return nil, err
	}
	ents, err := d.Entries()
	d.Close()
	if err != nil {
		return nil, err
	}
	files := []File{}
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !ids.Is(id, IDPrefix) {
			continue
		}
		f, err := s.readMeta(dir, id)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	slices.SortFunc(files, func(a, b File) int {
		return cmp.Or(cmp.Compare(a.Metadata.CreatedAt, b.Metadata.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	return files, nil
}

func (s *Dir) readMeta(dir, id string) (File, error) {
	data, err := s.readAll(filepath.Join(dir, id+".json"))
	if errors.Is(err, fs.ErrNotExist) {
		return File{}, notFound(id)
	} else if err != nil {
		return File{}, err
	}
	var f File
	if err := json.Unmarshal(data, &f); err != nil {
		return File{}, fmt.Errorf("sessionfiles: file %s: %w", id, err)
	}
	return f, nil
}

func notFound(id string) error { return storeerr.NotFound("file %q not found in this session", id) }

// readAll reads the store's file name.
func (s *Dir) readAll(name string) ([]byte, error) {
	f, _, err := s.root.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// lookup resolves a session's file; an id the store could not have issued
// or a session uuid that is not one is not found before any path is built.
func (s *Dir) lookup(sessionUUID, id string) (string, File, error) {
	dir, err := sessionDir(sessionUUID)
	if err != nil || !ids.Is(id, IDPrefix) {
		return "", File{}, notFound(id)
	}
	f, err := s.readMeta(dir, id)
	return dir, f, err
}

// Get implements Store.
func (s *Dir) Get(sessionUUID, id string) (File, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, f, err := s.lookup(sessionUUID, id)
	return f, err
}

// Open implements Store.
func (s *Dir) Open(sessionUUID, id string) (File, io.ReadSeekCloser, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	dir, f, err := s.lookup(sessionUUID, id)
	if err != nil {
		return File{}, nil, err
	}
	c, fi, err := s.root.Open(filepath.Join(dir, id+".bin"))
	if err == nil && fi.IsDir() {
		c.Close()
		err = fmt.Errorf("sessionfiles: file %s: content is a directory", id)
	}
	if err != nil {
		return File{}, nil, err
	}
	return f, c, nil
}

// Remove implements Store. The record goes first: should the content's
// removal fail, what remains is an unlisted orphan, not a listed file
// without content.
func (s *Dir) Remove(sessionUUID, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	dir, _, err := s.lookup(sessionUUID, id)
	if err != nil {
		return err
	}
	if err := s.root.Remove(filepath.Join(dir, id+".json")); err != nil {
		return err
	}
	if err := s.root.Remove(filepath.Join(dir, id+".bin")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// RemoveAll implements Store. An upload still streaming fails at its
// rename.
func (s *Dir) RemoveAll(sessionUUID string) error {
	dir, err := sessionDir(sessionUUID)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.root.RemoveAll(dir)
}
