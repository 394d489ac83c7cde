// Package bleveindex is the life cycle every openheim bleve index shares:
// opening with a lock timeout (busy rather than hung), creating an index in
// a scratch directory so no process ever opens a half-made one, checking
// its schema stamp, and rebuilding beside the live index then swapping it in.
// The index packages (sessions, memory) own their mappings and documents.
package bleveindex

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/index/scorch/mergeplan"
	"github.com/blevesearch/bleve/v2/mapping"
	bolterrors "go.etcd.io/bbolt/errors"
)

// Errors of Open; the index packages wrap them in their own.
var (
	ErrMissing = errors.New("index missing")
	ErrBusy    = errors.New("index busy: another process holds it")
	ErrStale   = errors.New("index of another schema")
)

// ScratchSuffix names the scratch directories beside an index (dir + suffix
// + random); LeftoverAge is when an abandoned one may be removed.
const (
	ScratchSuffix = ".tmp-"
	LeftoverAge   = 24 * time.Hour
)

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

// Schema identifies an index's layout: the mapping, and the internal key
// and value stamped into every index built with it.
type Schema struct {
	Mapping func() *mapping.IndexMappingImpl
	Key     []byte
	Version string
}

// Open opens the index at dir, waiting at most opts.Timeout for another
// process's lock (ErrBusy), and creates it when missing unless ReadOnly
// (ErrMissing). An index of another schema is ErrStale. what names the
// index in errors.
func Open(dir string, opts Options, s Schema, what string) (bleve.Index, error) {
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	readOnly := opts.ReadOnly
	cfg := map[string]any{"bolt_timeout": timeout.String()}
	if readOnly {
		cfg["read_only"] = true
	}
	// Three rounds: open, else create and open; a third only when the
	// index vanished again in between (a concurrent rebuild's fallback swap).
	var err error
	for range 3 {
		var b bleve.Index
		b, err = bleve.OpenUsing(dir, cfg)
		switch {
		case err == nil:
			return checkSchema(b, s)
		case errors.Is(err, bolterrors.ErrTimeout):
			return nil, ErrBusy
		case !isMissing(err):
			return nil, fmt.Errorf("%s: open %s: %w", what, dir, err)
		case readOnly:
			return nil, ErrMissing
		}
		if err = create(dir, s, what); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("%s: open %s: %w", what, dir, err)
}

func isMissing(err error) bool {
	return errors.Is(err, bleve.ErrorIndexPathDoesNotExist) || errors.Is(err, bleve.ErrorIndexMetaMissing)
}

// create builds an empty index in a scratch directory and renames it to
// dir, so no other process can open a half-created one (no mapping yet)
// and mistake it for a broken index. Losing the rename to a concurrent
// creator is fine: the caller then opens theirs.
func create(dir string, s Schema, what string) error {
	b, tmp, err := New(dir, s)
	if err != nil {
		return fmt.Errorf("%s: create: %w", what, err)
	}
	defer os.RemoveAll(tmp) // gone already after a successful rename
	if err := b.Close(); err != nil {
		return fmt.Errorf("%s: create: %w", what, err)
	}
	// An empty dir (made by hand, or a rebuild's scratch) is as good as
	// none, but os.Rename refuses to replace any directory. Remove deletes
	// only empty ones, so it cannot hurt a concurrent creator that won.
	_ = os.Remove(dir)
	if err := os.Rename(tmp, dir); err != nil && !isPopulated(dir) {
		return fmt.Errorf("%s: create: %w", what, err)
	}
	return nil
}

// New creates an empty, stamped index in a new scratch directory beside
// dir and returns it open, with the scratch path (for Swap or removal).
func New(dir string, s Schema) (bleve.Index, string, error) {
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return nil, "", err
	}
	tmp, err := os.MkdirTemp(parent, filepath.Base(dir)+ScratchSuffix)
	if err != nil {
		return nil, "", err
	}
	b, err := bleve.NewUsing(tmp, s.Mapping(), scorch.Name, scorch.Name, nil)
	if err == nil {
		if err = b.SetInternal(s.Key, []byte(s.Version)); err != nil {
			b.Close()
		}
	}
	if err != nil {
		os.RemoveAll(tmp)
		return nil, "", err
	}
	return b, tmp, nil
}

func isPopulated(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "index_meta.json"))
	return err == nil
}

func checkSchema(b bleve.Index, s Schema) (bleve.Index, error) {
	v, err := b.GetInternal(s.Key)
	if err != nil {
		_ = b.Close()
		return nil, err
	}
	if string(v) != s.Version {
		_ = b.Close()
		return nil, ErrStale
	}
	return b, nil
}

// Compact merges bulk-loaded segments into one: readers never merge, and
// each segment costs every query and stored-field load a lookup.
func Compact(b bleve.Index) error {
	adv, err := b.Advanced()
	if err != nil {
		return err
	}
	s, ok := adv.(*scorch.Scorch)
	if !ok {
		return nil
	}
	if err := s.ForceMerge(context.Background(), &mergeplan.SingleSegmentMergePlanOptions); err != nil {
		return err
	}
	// The merged segments are only in memory until the next persisted
	// batch; this one (waited for, like every batch) writes them down, so
	// a reopen can drop the segments they replaced.
	return b.SetInternal(builtKey, []byte(time.Now().UTC().Format(time.RFC3339)))
}

// builtKey records when an index was last compacted (for debugging).
var builtKey = []byte("openheim.built")

// Guard opens the current index read-only, straight through bleve, so a
// stale schema or a damaged index (the usual reasons to rebuild) still lets
// a rebuild proceed; only a writer holding it stops it (ErrBusy). A nil
// index means there is nothing to guard.
func Guard(dir string, timeout time.Duration) (bleve.Index, error) {
	b, err := bleve.OpenUsing(dir, map[string]any{"read_only": true, "bolt_timeout": timeout.String()})
	switch {
	case err == nil:
		return b, nil
	case errors.Is(err, bolterrors.ErrTimeout):
		return nil, ErrBusy
	}
	return nil, nil
}

// CloseGuard releases what Guard opened.
func CloseGuard(g bleve.Index) {
	if g != nil {
		_ = g.Close()
	}
}

// Swap puts the index built in tmp at dir and removes the previous one.
func Swap(tmp, dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		if os.Rename(tmp, dir) == nil {
			return nil
		}
		// Someone created dir meanwhile: replace it like any old index.
	}
	if Exchange(tmp, dir) == nil {
		return os.RemoveAll(tmp) // tmp now holds the old index
	}
	// No atomic exchange here: a reader arriving between the two renames
	// gets ErrMissing and falls back, never a partial index.
	old := tmp + ".old"
	if err := os.Rename(dir, old); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		_ = os.Rename(old, dir)
		return err
	}
	return os.RemoveAll(old)
}

// RemoveLeftovers deletes scratch directories beside dir older than
// LeftoverAge (a rebuild killed midway).
func RemoveLeftovers(dir string) {
	matches, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), filepath.Base(dir)+ScratchSuffix+"*"))
	for _, m := range matches {
		if fi, err := os.Lstat(m); err == nil && time.Since(fi.ModTime()) > LeftoverAge {
			_ = os.RemoveAll(m)
		}
	}
}

// Rebuild builds a fresh index with fill in a scratch directory beside dir,
// compacts it, then swaps it in and removes the old one, so a reader opens
// either the old index or the complete new one. fill must hand documents to
// b in batches (a new batch after each Batch call: scorch may still read the
// old one). It fails with ErrBusy, leaving dir untouched, when another
// process holds the current index for writing (it would keep writing into
// the discarded copy).
func Rebuild(dir string, timeout time.Duration, s Schema, what string, fill func(b bleve.Index) error) error {
	dir = filepath.Clean(dir)
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return fmt.Errorf("%s: rebuild: %w", what, err)
	}
	RemoveLeftovers(dir)
	// Fail fast, before the expensive part, when a writer holds dir.
	g, err := Guard(dir, timeout)
	if err != nil {
		return err
	}
	CloseGuard(g)

	b, tmp, err := New(dir, s)
	if err != nil {
		return fmt.Errorf("%s: rebuild: %w", what, err)
	}
	swapped := false
	defer func() {
		if !swapped {
			_ = os.RemoveAll(tmp)
		}
	}()
	err = fill(b)
	if err == nil {
		err = Compact(b)
	}
	// Close persists the last segments; its error matters as much.
	if cerr := b.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	// Scorch deletes the segments a merge replaced only when a writer opens
	// the index again: do it now rather than ship them.
	x, err := Open(tmp, Options{Timeout: timeout}, s, what)
	if err != nil {
		return err
	}
	if err := x.Close(); err != nil {
		return err
	}
	// Hold the old index shared while swapping: no writer can open it in
	// between, and one that opens dir afterwards gets the new index.
	g, err = Guard(dir, timeout)
	if err != nil {
		return err
	}
	defer CloseGuard(g)
	if err := Swap(tmp, dir); err != nil {
		return fmt.Errorf("%s: rebuild: swap: %w", what, err)
	}
	swapped = true
	return nil
}

// Batcher hands documents to an index in batches of a fixed size, with a
// new batch after each (not Reset: scorch may still read a batch after
// Batch returns, a data race under -race).
type Batcher struct {
	x    bleve.Index
	b    *bleve.Batch
	size int
}

// NewBatcher returns a Batcher for x flushing every size documents.
func NewBatcher(x bleve.Index, size int) *Batcher {
	return &Batcher{x: x, b: x.NewBatch(), size: size}
}

// Index adds a document, handing the batch to the index when it is full.
func (b *Batcher) Index(id string, doc any) error {
	if err := b.b.Index(id, doc); err != nil {
		return err
	}
	return b.FlushFull()
}

// FlushFull hands the batch to the index if it holds size operations or
// more (for callers that add to Batch() directly).
func (b *Batcher) FlushFull() error {
	if b.b.Size() < b.size {
		return nil
	}
	return b.Flush()
}

// Batch is the batch being filled (to add internal values to it).
func (b *Batcher) Batch() *bleve.Batch { return b.b }

// Flush hands what is pending to the index.
func (b *Batcher) Flush() error {
	if b.b.Size() == 0 {
		return nil
	}
	err := b.x.Batch(b.b)
	b.b = b.x.NewBatch()
	return err
}
