package bleveindex

import (
	"sync"

	"github.com/blevesearch/bleve/v2"
)

// Handle is an open index as the index packages hold it: the bleve index's
// methods, whether it was opened read-only, and a Close that may be called
// twice.
type Handle struct {
	index // by an alias, so bleve.Index's Index method is not hidden
	// ReadOnly is checked by writers: scorch would accept a batch on a
	// read-only index in memory and silently never persist it.
	ReadOnly bool
	// closeOnce: scorch panics on a second Close, and deferred closes on
	// error paths make double closes easy for callers.
	closeOnce sync.Once
	closeErr  error
}

// OpenHandle opens the index at dir as Open does.
func OpenHandle(dir string, opts Options, s Schema, what string) (*Handle, error) {
	b, err := Open(dir, opts, s, what)
	if err != nil {
		return nil, err
	}
	return &Handle{index: b, ReadOnly: opts.ReadOnly}, nil
}

// Close releases the index and its lock. Closing twice is harmless.
func (h *Handle) Close() error {
	h.closeOnce.Do(func() { h.closeErr = h.index.Close() })
	return h.closeErr
}

type index = bleve.Index
