// Package memory is the bleve keyword index of openheim's long-term notes.
//
// It is derived data (DESIGN.md §4): the note log in runtime/memory is the
// source of truth, and Rebuild recreates the index from it at any time. The
// index remembers the log sequence number it reflects (Seq), so its owner
// can tell an index in step with the log from one that missed changes (a
// crash between the log write and the index update, another process that
// found the index busy) and bring it up to date.
//
// Locking is scorch's: a writer holds the bolt file exclusively, readers
// (ReadOnly) share it. Open waits up to Options.Timeout for the other side,
// then fails with ErrBusy rather than hanging.
package memory

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/search/query"
	bolterrors "go.etcd.io/bbolt/errors"
)

// Doc is one note as the index sees it.
type Doc struct {
	ID   int64
	Text string
}

// Options tune Open.
type Options struct {
	// ReadOnly opens without creating and shares the lock with other
	// readers (but not with a writer).
	ReadOnly bool
	// Timeout bounds the wait for another holder; 0 means DefaultTimeout.
	Timeout time.Duration
}

// DefaultTimeout is how long Open waits for a busy index by default.
const DefaultTimeout = 2 * time.Second

var (
	// ErrMissing: there is no index at dir (only returned when ReadOnly).
	ErrMissing = errors.New("memory index: missing")
	// ErrBusy: another process (or another Open in this one) holds the
	// index in a conflicting mode and did not let go within the timeout.
	ErrBusy = errors.New("memory index: busy")
	// ErrStale: the index was written with another schema; Rebuild it.
	ErrStale = errors.New("memory index: stale schema")
	// ErrReadOnly: a write on an index opened ReadOnly.
	ErrReadOnly = errors.New("memory index: opened read-only")
)

// Index is an open memory index. Its methods are safe for concurrent use.
type Index struct {
	b         bleve.Index
	readOnly  bool
	closeOnce sync.Once
	closeErr  error
}

// Open opens the index at dir, creating an empty one (Seq 0) when missing
// unless ReadOnly.
func Open(dir string, opts Options) (*Index, error) {
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	cfg := map[string]any{"bolt_timeout": timeout.String()}
	if opts.ReadOnly {
		cfg["read_only"] = true
	}
	// A third round only when the index vanished again in between (a
	// concurrent Rebuild's two-rename swap).
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
			return nil, fmt.Errorf("memory index: open %s: %w", dir, err)
		case opts.ReadOnly:
			return nil, ErrMissing
		}
		if err = create(dir); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("memory index: open %s: %w", dir, err)
}

func isMissing(err error) bool {
	return errors.Is(err, bleve.ErrorIndexPathDoesNotExist) || errors.Is(err, bleve.ErrorIndexMetaMissing)
}

// create builds an empty index in a scratch directory and renames it to
// dir, so no other process ever opens a half-created one.
func create(dir string) error {
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return fmt.Errorf("memory index: create: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, filepath.Base(dir)+scratchSuffix)
	if err != nil {
		return fmt.Errorf("memory index: create: %w", err)
	}
	defer os.RemoveAll(tmp) // gone already after a successful rename
	b, err := bleve.NewUsing(tmp, newMapping(), scorch.Name, scorch.Name, nil)
	if err != nil {
		return fmt.Errorf("memory index: create: %w", err)
	}
	err = b.SetInternal(schemaKey, []byte(schemaVersion))
	if cerr := b.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("memory index: create: %w", err)
	}
	// os.Rename refuses to replace a directory, even an empty one made by
	// hand; Remove deletes only empty ones, so a winner is never hurt.
	_ = os.Remove(dir)
	if err := os.Rename(tmp, dir); err != nil && !isPopulated(dir) {
		return fmt.Errorf("memory index: create: %w", err)
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

// Seq is the log sequence number the index reflects: 0 for a new index.
func (x *Index) Seq() (int64, error) {
	v, err := x.b.GetInternal(seqKey)
	if err != nil || len(v) == 0 {
		return 0, err
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("memory index: stored sequence %q: %w", v, err)
	}
	return n, nil
}

// Count returns the number of indexed notes.
func (x *Index) Count() (int, error) {
	n, err := x.b.DocCount()
	return int(n), err
}

// IDs returns the id of every indexed note, in no particular order.
func (x *Index) IDs() ([]int64, error) {
	n, err := x.Count()
	if err != nil || n == 0 {
		return nil, err
	}
	req := bleve.NewSearchRequestOptions(query.NewMatchAllQuery(), n, 0, false)
	req.Score = "none"
	res, err := x.b.Search(req)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, 0, len(res.Hits))
	for _, h := range res.Hits {
		if id, ok := parseDocID(h.ID); ok {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// applyBatch bounds one bleve batch when Apply is handed many changes.
const applyBatch = 500

// Apply indexes put (replacing notes of the same id), removes del, and
// records seq as the log position the index now reflects. The stamp goes
// in the last batch, so an interrupted Apply leaves the old one: the
// caller simply applies again.
func (x *Index) Apply(put []Doc, del []int64, seq int64) error {
	if x.readOnly {
		return ErrReadOnly
	}
	b := x.b.NewBatch()
	flush := func() error {
		err := x.b.Batch(b)
		b = freshBatch(x)
		return err
	}
	for _, id := range del {
		b.Delete(docID(id))
	}
	for _, d := range put {
		if b.Size() >= applyBatch {
			if err := flush(); err != nil {
				return err
			}
		}
		if err := b.Index(docID(d.ID), document(d)); err != nil {
			return err
		}
	}
	b.SetInternal(seqKey, []byte(strconv.FormatInt(seq, 10)))
	return flush()
}
