package backend

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/openheim/openheim/runtime/atomicfile"
	"github.com/openheim/openheim/runtime/bundle"
	"github.com/openheim/openheim/runtime/session"
	"github.com/openheim/openheim/runtime/sessionfiles"
	"github.com/openheim/openheim/runtime/storeerr"
)

// FileBackend keeps everything under a data directory, as openheim always
// has: history/ (sessions and their lease files), files/, agents-api/ and
// one directory per Docs collection. No server is needed.
type FileBackend struct {
	Home string
	// Warn receives recoverable problems (a torn last line, a stale lease
	// taken over); nil logs them.
	Warn func(string)

	store  *session.FileStore
	locker *session.Locker
}

var _ Backend = (*FileBackend)(nil)

// OpenFiles opens the file backend in home, creating history/.
func OpenFiles(home string, warn func(string)) (*FileBackend, error) {
	store, err := session.NewFileStore(filepath.Join(home, "history"))
	if err != nil {
		return nil, err
	}
	store.Warn = warn
	return &FileBackend{Home: home, Warn: warn, store: store,
		locker: &session.Locker{Dir: store.Dir, Warn: warn}}, nil
}

// Name implements Backend.
func (*FileBackend) Name() string { return "files" }

// Sessions implements Backend.
func (b *FileBackend) Sessions() session.Source { return b.store }

// FileStore is the session store itself (its Dir is swept of spare files).
func (b *FileBackend) FileStore() *session.FileStore { return b.store }

// Leaser implements Backend: the lease files of history/.
func (b *FileBackend) Leaser() session.Leaser { return b.locker }

// Locker is the leaser itself, for tests that tune its timings.
func (b *FileBackend) Locker() *session.Locker { return b.locker }

// Files implements Backend.
func (b *FileBackend) Files(maxBytes int64, now func() time.Time) (sessionfiles.Store, error) {
	return sessionfiles.OpenDir(filepath.Join(b.Home, "files"), maxBytes, now)
}

// Bundles implements Backend.
func (b *FileBackend) Bundles() (bundle.Store, error) {
	return bundle.OpenDir(filepath.Join(b.Home, "agents-api"))
}

// Docs implements Backend: one JSON file per key in home/<name>.
func (b *FileBackend) Docs(name string) (Docs, error) {
	if err := ValidKey(name); err != nil {
		return nil, err
	}
	dir := filepath.Join(b.Home, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	return docDir(dir), nil
}

// Close implements Backend.
func (*FileBackend) Close() error { return nil }

// ValidKey accepts the keys every backend can store as they are: ASCII
// letters, digits, '-' and '_' (a uuid, an agent id), 1-200 of them.
func ValidKey(key string) error {
	if key == "" || len(key) > 200 {
		return storeerr.Invalid("invalid key %q", key)
	}
	for _, r := range key {
		ok := r == '-' || r == '_' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
		if !ok {
			return storeerr.Invalid("invalid key %q", key)
		}
	}
	return nil
}

// DocDir is Docs in dir (created on first Put): each document in
// <dir>/<key>.json, replaced atomically.
func DocDir(dir string) Docs { return docDir(dir) }

// docDir keeps each document in <dir>/<key>.json, replaced atomically.
type docDir string

func (d docDir) path(key string) string { return filepath.Join(string(d), key+".json") }

func (d docDir) Get(key string) ([]byte, bool, error) {
	if err := ValidKey(key); err != nil {
		return nil, false, err
	}
	data, err := os.ReadFile(d.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	return data, err == nil, err
}

func (d docDir) Put(key string, data []byte) error {
	if err := ValidKey(key); err != nil {
		return err
	}
	if err := os.MkdirAll(string(d), 0o700); err != nil {
		return err
	}
	return atomicfile.Write(d.path(key), data, 0o600)
}

func (d docDir) Delete(key string) error {
	if err := ValidKey(key); err != nil {
		return err
	}
	if err := os.Remove(d.path(key)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("deleting %s: %w", key, err)
	}
	return nil
}

func (d docDir) Keys() ([]string, error) {
	entries, err := os.ReadDir(string(d))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, e := range entries {
		if k, ok := strings.CutSuffix(e.Name(), ".json"); ok && ValidKey(k) == nil {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys, nil
}
