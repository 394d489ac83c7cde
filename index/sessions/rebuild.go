package sessions

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
	bolterrors "go.etcd.io/bbolt/errors"
)

// rebuildBatch is how many documents Rebuild hands bleve at once: large
// enough to amortise each batch's segment build and fsync, small enough to
// keep memory flat (FIELD-NOTES: batches for bulk).
const rebuildBatch = 500

// scratchSuffix marks the scratch directories Rebuild and Open's create
// make next to dir, so leftovers of a crash can be recognised and removed by
// the next Rebuild.
const scratchSuffix = ".tmp-"

// leftoverAge is how old a scratch directory must be before another Rebuild
// treats it as abandoned rather than as a concurrent rebuild's work.
const leftoverAge = 24 * time.Hour

// Rebuild builds a fresh index of everything sessions yields in a scratch
// directory next to dir, then swaps it in and removes the old one, so a
// reader opens either the old index or the complete new one. progress (may
// be nil) is called after each session with the count so far and total.
//
// It fails with ErrBusy, leaving dir untouched, when another process holds
// the current index for writing: that process would keep writing into the
// discarded copy. Readers of the old index keep their open files.
func Rebuild(dir string, sessions func(yield func(s Session, texts []string) bool) error, total int, progress func(done, total int)) error {
	dir = filepath.Clean(dir)
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return fmt.Errorf("sessions index: rebuild: %w", err)
	}
	removeLeftovers(dir)
	// Fail fast, before the expensive part, when a writer holds dir.
	g, err := guard(dir)
	if err != nil {
		return err
	}
	closeGuard(g)

	tmp, err := os.MkdirTemp(parent, filepath.Base(dir)+scratchSuffix)
	if err != nil {
		return fmt.Errorf("sessions index: rebuild: %w", err)
	}
	swapped := false
	defer func() {
		if !swapped {
			_ = os.RemoveAll(tmp)
		}
	}()
	if err := build(tmp, sessions, total, progress); err != nil {
		return err
	}
	// Scorch deletes the segments a merge replaced only when a writer opens
	// the index again; do it now rather than ship them (they doubled the
	// size on disk).
	x, err := Open(tmp, Options{})
	if err != nil {
		return err
	}
	if err := x.Close(); err != nil {
		return err
	}

	// Hold the old index shared while swapping: no writer can open it in
	// between, and one that opens dir afterwards gets the new index.
	g, err = guard(dir)
	if err != nil {
		return err
	}
	defer closeGuard(g)
	if err := swap(tmp, dir); err != nil {
		return fmt.Errorf("sessions index: rebuild: swap: %w", err)
	}
	swapped = true
	return nil
}

func build(tmp string, sessions func(yield func(s Session, texts []string) bool) error, total int, progress func(done, total int)) (err error) {
	x, err := Open(tmp, Options{})
	if err != nil {
		return err
	}
	defer func() {
		// Close persists the last segments; its error matters as much.
		if cerr := x.Close(); err == nil {
			err = cerr
		}
	}()
	b := x.b.NewBatch()
	done := 0
	var ierr error
	serr := sessions(func(s Session, texts []string) bool {
		if s.ID == "" {
			ierr = errors.New("sessions index: rebuild: session with empty id")
			return false
		}
		if ierr = indexSession(b, s, texts); ierr != nil {
			return false
		}
		if b.Size() >= rebuildBatch {
			if ierr = x.b.Batch(b); ierr != nil {
				return false
			}
			// A new batch, not Reset: bleve's scorch may still be reading
			// the old one after Batch returns (a data race under -race).
			b = x.b.NewBatch()
		}
		done++
		if progress != nil {
			progress(done, total)
		}
		return true
	})
	switch {
	case ierr != nil:
		return ierr
	case serr != nil:
		return fmt.Errorf("sessions index: rebuild: reading sessions: %w", serr)
	case b.Size() > 0:
		if err := x.b.Batch(b); err != nil {
			return err
		}
	}
	return compact(x)
}

// compact merges the ~20 bulk-loaded segments. Readers never merge, and
// every stored-field load looks its id up in each segment: on 10,000
// sessions, listing all fell from ~150 ms to ~80 ms and a 50-session page
// from 2.4 ms to 0.8 ms, for ~2 s more build time.
func compact(x *Index) error {
	adv, err := x.b.Advanced()
	if err != nil {
		return err
	}
	// One round leaves ~2 segments on 200,000 docs; a second round to reach
	// one cost 3.5 s more and measured no faster to read.
	s, ok := adv.(*scorch.Scorch)
	if !ok {
		return nil
	}
	if err := s.ForceMerge(context.Background(), &mergeplan.SingleSegmentMergePlanOptions); err != nil {
		return err
	}
	// The merged segments are only in memory until the next persisted
	// batch; this one (waited for, like every batch) writes them down, so
	// the reopen in Rebuild can drop the segments they replaced.
	return x.b.SetInternal(builtKey, []byte(time.Now().UTC().Format(time.RFC3339)))
}

// builtKey records when Rebuild finished the index (useful when debugging a
// stale index; nothing reads it).
var builtKey = []byte("openheim.built")

// guard opens the current index read-only, straight through bleve so that a
// stale schema or a damaged index (the usual reasons to rebuild) still lets
// the rebuild proceed; only a writer holding it stops us.
func guard(dir string) (bleve.Index, error) {
	b, err := bleve.OpenUsing(dir, map[string]any{
		"read_only":    true,
		"bolt_timeout": DefaultTimeout.String(),
	})
	switch {
	case err == nil:
		return b, nil
	case errors.Is(err, bolterrors.ErrTimeout):
		return nil, ErrBusy
	}
	return nil, nil
}

func closeGuard(g bleve.Index) {
	if g != nil {
		_ = g.Close()
	}
}

// swap puts the index built in tmp at dir and removes the previous one.
func swap(tmp, dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		if os.Rename(tmp, dir) == nil {
			return nil
		}
		// Someone created dir meanwhile: replace it like any old index.
	}
	if exchange(tmp, dir) == nil {
		return os.RemoveAll(tmp) // tmp now holds the old index
	}
	// No atomic exchange here: a reader arriving between the two renames
	// gets ErrMissing and falls back to the stores, never a partial index.
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

func removeLeftovers(dir string) {
	matches, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), filepath.Base(dir)+scratchSuffix+"*"))
	for _, m := range matches {
		if fi, err := os.Lstat(m); err == nil && time.Since(fi.ModTime()) > leftoverAge {
			_ = os.RemoveAll(m)
		}
	}
}
