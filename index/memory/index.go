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
	"strconv"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"
	"github.com/openheim/openheim/index/bleveindex"
)

// Doc is one note as the index sees it.
type Doc struct {
	ID   int64
	Text string
}

// Options tune Open (ReadOnly, Timeout).
type Options = bleveindex.Options

// DefaultTimeout is how long Open waits for a busy index by default.
const DefaultTimeout = bleveindex.DefaultTimeout

var (
	// ErrMissing: there is no index at dir (only returned when ReadOnly).
	ErrMissing = bleveindex.ErrMissing
	// ErrBusy: another process (or another Open in this one) holds the
	// index in a conflicting mode and did not let go within the timeout.
	ErrBusy = bleveindex.ErrBusy
	// ErrStale: the index was written with another schema; Rebuild it.
	ErrStale = bleveindex.ErrStale
	// ErrReadOnly: a write on an index opened ReadOnly.
	ErrReadOnly = errors.New("memory index: opened read-only")
)

// Index is an open memory index. Its methods are safe for concurrent use.
type Index struct {
	b *bleveindex.Handle
}

// Open opens the index at dir, creating an empty one (Seq 0) when missing
// unless ReadOnly.
func Open(dir string, opts Options) (*Index, error) {
	b, err := bleveindex.OpenHandle(dir, opts, schema, "memory index")
	if err != nil {
		return nil, err
	}
	return &Index{b: b}, nil
}

// schema stamps the indexes this version builds.
var schema = bleveindex.Schema{Mapping: newMapping, Key: schemaKey, Version: schemaVersion}

// Close releases the index and its lock. Closing twice is harmless.
func (x *Index) Close() error { return x.b.Close() }

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
	if x.b.ReadOnly {
		return ErrReadOnly
	}
	bt := bleveindex.NewBatcher(x.b, applyBatch)
	for _, id := range del {
		bt.Batch().Delete(docID(id))
	}
	for _, d := range put {
		if err := bt.Index(docID(d.ID), document(d)); err != nil {
			return err
		}
	}
	bt.Batch().SetInternal(seqKey, []byte(strconv.FormatInt(seq, 10)))
	return bt.Flush()
}
