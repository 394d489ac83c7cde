package memory

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/index/scorch/mergeplan"
	bolterrors "go.etcd.io/bbolt/errors"
)

// rebuildBatch is how many notes Rebuild hands bleve at once (FIELD-NOTES:
// batches for bulk loads). Measured on 100,000 notes: 250 per batch built
// in 4.5 s, 1,000 in 3.4 s, 5,000 in 2.9 s; 1,000 keeps memory flat.
const rebuildBatch = 1000

// scratchSuffix marks the directories Rebuild and create make next to dir.
const scratchSuffix = ".tmp-"

// leftoverAge is how old a scratch directory must be before Rebuild treats
// it as a crashed run's leftover rather than a concurrent rebuild's work.
const leftoverAge = 24 * time.Hour

// Rebuild builds a fresh index of every note docs yields, stamped with seq,
// in a scratch directory next to dir, then swaps it in, so a reader opens
// either the old index or the complete new one. progress (may be nil) is
// called after each note with the count so far and total.
//
// It fails with ErrBusy, leaving dir untouched, when another process holds
// the current index for writing (it would keep writing into the discarded
// copy).
func Rebuild(dir string, docs func(yield func(Doc) bool) error, total int, seq int64, progress func(done, total int)) error {
	dir = filepath.Clean(dir)
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return fmt.Errorf("memory index: rebuild: %w", err)
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
		return fmt.Errorf("memory index: rebuild: %w", err)
	}
	swapped := false
	defer func() {
		if !swapped {
			_ = os.RemoveAll(tmp)
		}
	}()
	if err := build(tmp, docs, total, seq, progress); err != nil {
		return err
	}
	// Scorch deletes segments a merge replaced only when a writer opens the
	// index again: do it now rather than ship them.
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
		return fmt.Errorf("memory index: rebuild: swap: %w", err)
	}
	swapped = true
	return nil
}

func build(tmp string, docs func(yield func(Doc) bool) error, total int, seq int64, progress func(done, total int)) (err error) {
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
	serr := docs(func(d Doc) bool {
		if d.ID <= 0 {
			ierr = fmt.Errorf("memory index: rebuild: note id %d", d.ID)
			return false
		}
		if ierr = b.Index(docID(d.ID), document(d)); ierr != nil {
			return false
		}
		if b.Size() >= rebuildBatch {
			if ierr = x.b.Batch(b); ierr != nil {
				return false
			}
			b = freshBatch(x)
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
		return fmt.Errorf("memory index: rebuild: reading notes: %w", serr)
	}
	// The stamp rides with the last batch; an index without it (a crash
	// before this point never gets swapped in anyway) would read as Seq 0.
	b.SetInternal(seqKey, []byte(strconv.FormatInt(seq, 10)))
	if err := x.b.Batch(b); err != nil {
		return err
	}
	return compact(x)
}

// freshBatch replaces a batch just handed to bleve. Scorch's Batch returns
// while a goroutine of its own may still be ranging over the batch's
// operations (bleve v2.6.3, scorch.go:543), so Reset on it is a data race
// (caught by -race); a new batch is not.
func freshBatch(x *Index) *bleve.Batch { return x.b.NewBatch() }

// compact merges the bulk-loaded segments: readers never merge, and each
// segment costs every query a lookup.
func compact(x *Index) error {
	adv, err := x.b.Advanced()
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
	// batch; this one writes them down, so the reopen in Rebuild can drop
	// the segments they replaced.
	return x.b.SetInternal(builtKey, []byte(time.Now().UTC().Format(time.RFC3339)))
}

// builtKey records when Rebuild finished (for debugging; nothing reads it).
var builtKey = []byte("openheim.built")

// guard opens the current index read-only straight through bleve, so a
// stale schema or a damaged index still lets the rebuild proceed; only a
// writer holding it stops us.
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

func removeLeftovers(dir string) {
	matches, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), filepath.Base(dir)+scratchSuffix+"*"))
	for _, m := range matches {
		if fi, err := os.Lstat(m); err == nil && time.Since(fi.ModTime()) > leftoverAge {
			_ = os.RemoveAll(m)
		}
	}
}
