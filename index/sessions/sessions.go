// Package sessions is the bleve full-text index of openheim's stored
// conversations: what `sessions ls` lists and `sessions search` searches.
//
// It is derived data (DESIGN.md §4): the session stores stay the source of
// truth, and Rebuild recreates the index from them at any time. Callers must
// treat ErrMissing, ErrStale and ErrBusy as "use the stores instead".
//
// Locking: scorch keeps a bolt file that one process holds exclusively while
// it has the index open for writing, or several processes hold shared while
// they have it open ReadOnly. Open waits up to Options.Timeout for the other
// side to close, then fails with ErrBusy rather than hanging.
package sessions

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	bolterrors "go.etcd.io/bbolt/errors"
)

// Session is one conversation as `sessions ls` shows it.
type Session struct {
	ID, Title, Model, Provider, Cwd string
	CreatedAt, UpdatedAt            time.Time
	Messages                        int
}

// Filter narrows List. Zero values mean "no restriction".
type Filter struct {
	Cwd   string    // exact working directory
	Since time.Time // UpdatedAt >= Since
	Limit int       // 0 = all
}

// Hit is one session found by Search, with its best-matching message.
type Hit struct {
	SessionID string
	Message   int // 0-based index of the matching message, -1 when the title matched
	Score     float64
}

// Options tune Open.
type Options struct {
	// ReadOnly opens without creating and takes the bolt lock shared, so any
	// number of readers can coexist (but not with a writer).
	ReadOnly bool
	// Timeout bounds the wait for another process holding the index;
	// 0 means DefaultTimeout.
	Timeout time.Duration
}

// DefaultTimeout is how long Open waits for a busy index by default.
const DefaultTimeout = 2 * time.Second

var (
	// ErrMissing: there is no index at dir (only returned when ReadOnly).
	ErrMissing = errors.New("sessions index: missing")
	// ErrBusy: another process (or another Open in this one) holds the index
	// in a conflicting mode and did not let go within Options.Timeout.
	ErrBusy = errors.New("sessions index: busy")
	// ErrStale: the index was written with another schema; Rebuild it.
	ErrStale = errors.New("sessions index: stale schema")
	// ErrReadOnly: a write on an index opened ReadOnly. Checked by us because
	// scorch would accept the batch in memory and silently never persist it.
	ErrReadOnly = errors.New("sessions index: opened read-only")
)

// Index is an open sessions index. Its methods are safe for concurrent use.
type Index struct {
	b        bleve.Index
	readOnly bool
	// wmu serialises writers, so DeleteSession/ReplaceSession's
	// find-then-delete cannot interleave with an AddMessages of this process.
	wmu sync.Mutex
	// closeOnce: scorch panics on a second Close, and deferred closes on
	// error paths make double closes easy for callers.
	closeOnce sync.Once
	closeErr  error
}

// Open opens the index at dir, creating it when missing unless ReadOnly.
func Open(dir string, opts Options) (*Index, error) {
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	cfg := map[string]any{"bolt_timeout": timeout.String()}
	if opts.ReadOnly {
		cfg["read_only"] = true
	}
	// Three rounds: open, else create and open; a third only when the index
	// vanished again in between (a concurrent Rebuild's fallback swap).
	var err error
	for range 3 {
		var b bleve.Index
		b, err = bleve.OpenUsing(dir, cfg)
		switch {
		case err == nil:
			return checkSchema(b, opts.ReadOnly)
		case errors.Is(err, bolterrors.ErrTimeout):
			return nil, ErrBusy
		case !isMissing(err):
			return nil, fmt.Errorf("sessions index: open %s: %w", dir, err)
		case opts.ReadOnly:
			return nil, ErrMissing
		}
		if err = create(dir); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("sessions index: open %s: %w", dir, err)
}

func isMissing(err error) bool {
	return errors.Is(err, bleve.ErrorIndexPathDoesNotExist) || errors.Is(err, bleve.ErrorIndexMetaMissing)
}

// create builds an empty index in a scratch directory and renames it to dir,
// so no other process can open a half-created one (no mapping yet) and
// mistake it for a broken index. Losing the rename to a concurrent creator
// is fine: the caller then opens theirs.
func create(dir string) error {
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return fmt.Errorf("sessions index: create: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, filepath.Base(dir)+scratchSuffix)
	if err != nil {
		return fmt.Errorf("sessions index: create: %w", err)
	}
	defer os.RemoveAll(tmp) // gone already after a successful rename
	b, err := bleve.NewUsing(tmp, newMapping(), scorch.Name, scorch.Name, nil)
	if err != nil {
		return fmt.Errorf("sessions index: create: %w", err)
	}
	err = b.SetInternal(schemaKey, []byte(schemaVersion))
	if cerr := b.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sessions index: create: %w", err)
	}
	// An empty dir (made by hand, or Rebuild's scratch) is as good as none,
	// but os.Rename refuses to replace any directory. Remove deletes only
	// empty ones, so it cannot hurt a concurrent creator that won.
	_ = os.Remove(dir)
	if err := os.Rename(tmp, dir); err != nil && !isPopulated(dir) {
		return fmt.Errorf("sessions index: create: %w", err)
	}
	return nil
}

func isPopulated(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "index_meta.json"))
	return err == nil
}

func checkSchema(b bleve.Index, readOnly bool) (*Index, error) {
	v, err := b.GetInternal(schemaKey)
	if err != nil {
		_ = b.Close()
		return nil, err
	}
	if string(v) != schemaVersion {
		_ = b.Close()
		return nil, ErrStale
	}
	return &Index{b: b, readOnly: readOnly}, nil
}

// Close releases the index and its lock. Closing twice is harmless.
func (x *Index) Close() error {
	x.closeOnce.Do(func() { x.closeErr = x.b.Close() })
	return x.closeErr
}
