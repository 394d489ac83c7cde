package memory

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	memindex "github.com/openheim/openheim/index/memory"
)

// errRebuild: the index cannot be brought in step note by note (missing
// far behind, another schema, damaged, or ahead of the log); rebuild it
// from the log, without holding the store lock meanwhile.
var errRebuild = errors.New("memory index needs a rebuild")

// catchUpMax is the largest gap closed note by note; beyond it a rebuild
// is faster, reports progress, and leaves compact segments.
const catchUpMax = 2000

// withIndex calls fn with the index open and in step with the log. The
// caller holds m.mu and the store lock (so the log cannot move meanwhile).
// preferRO first tries a read-only open, which other readers share, and
// opens for writing only when there is something to catch up.
//
// It fails with memindex.ErrBusy when another process holds the index
// past Options.Timeout, and with errRebuild (see syncIndex).
func (m *Memory) withIndex(preferRO bool, fn func(*memindex.Index) error) error {
	ix, err := m.openIndex(preferRO)
	if err != nil {
		return err
	}
	err = fn(ix)
	if cerr := ix.Close(); err == nil {
		err = cerr
	}
	return err
}

func (m *Memory) openIndex(preferRO bool) (*memindex.Index, error) {
	dir := m.opts.IndexDir
	// A missing index is rebuilt (with progress), not created and filled
	// note by note.
	if _, err := os.Stat(filepath.Join(dir, "index_meta.json")); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: missing", errRebuild)
	}
	if preferRO {
		ix, err := memindex.Open(dir, memindex.Options{ReadOnly: true, Timeout: m.timeout()})
		if errors.Is(err, memindex.ErrBusy) {
			return nil, err
		}
		if err == nil {
			if ok, err := m.inStep(ix); err == nil && ok {
				return ix, nil
			}
			_ = ix.Close()
		}
	}
	ix, err := memindex.Open(dir, memindex.Options{Timeout: m.timeout()})
	switch {
	case errors.Is(err, memindex.ErrBusy):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("%w: %v", errRebuild, err)
	}
	if err := m.catchUp(ix); err != nil {
		_ = ix.Close()
		return nil, err
	}
	return ix, nil
}

func (m *Memory) inStep(ix *memindex.Index) (bool, error) {
	seq, err := ix.Seq()
	if err != nil || seq != m.log.lastSeq {
		return false, err
	}
	n, err := ix.Count()
	return n == m.log.notes.len(), err
}

// catchUp indexes the notes changed since the index's stamp and removes
// the ones deleted since, then stamps it with the log's last seq.
func (m *Memory) catchUp(ix *memindex.Index) error {
	seq, err := ix.Seq()
	if err != nil {
		return fmt.Errorf("%w: %v", errRebuild, err)
	}
	last := m.log.lastSeq
	if seq > last {
		return fmt.Errorf("%w: it reflects seq %d, the log ends at %d", errRebuild, seq, last)
	}
	if seq < last {
		var put, del []int64
		for id, e := range m.log.notes.all() {
			if e.rev > seq {
				put = append(put, id)
			}
		}
		for _, d := range m.log.deletes {
			if d.seq > seq {
				del = append(del, d.id)
			}
		}
		if err := m.apply(ix, put, del); err != nil {
			return err
		}
	}
	// Caught up, the index holds every live note: it held those unchanged
	// since its stamp. So another count means it also holds notes whose
	// deletion a compaction made the log forget, or it was damaged:
	// reconcile id by id.
	n, err := ix.Count()
	if err != nil || n == m.log.notes.len() {
		return err
	}
	ids, err := ix.IDs()
	if err != nil {
		return err
	}
	var put, del []int64
	indexed := make(map[int64]bool, len(ids))
	for _, id := range ids {
		indexed[id] = true
		if _, ok := m.log.notes.get(id); !ok {
			del = append(del, id)
		}
	}
	for id := range m.log.notes.all() {
		if !indexed[id] {
			put = append(put, id)
		}
	}
	return m.apply(ix, put, del)
}

func (m *Memory) apply(ix *memindex.Index, put, del []int64) error {
	if len(put) > catchUpMax {
		return fmt.Errorf("%w: %d notes to index", errRebuild, len(put))
	}
	docs := make([]memindex.Doc, 0, len(put))
	for _, id := range put {
		s, err := m.log.get(id)
		if err != nil {
			return err
		}
		docs = append(docs, doc(s))
	}
	return ix.Apply(docs, del, m.log.lastSeq)
}

func doc(s stored) memindex.Doc {
	return memindex.Doc{ID: s.ID, Text: s.Content}
}

// syncIndex brings the index in step with the log, rebuilding it when
// needed. The caller holds m.mu, not the store lock.
func (m *Memory) syncIndex() error {
	for rebuilt := false; ; rebuilt = true {
		err := m.locked(false, func() error {
			return m.withIndex(true, func(*memindex.Index) error { return nil })
		})
		if !errors.Is(err, errRebuild) || rebuilt {
			return err
		}
		if err := m.rebuild(); err != nil {
			return err
		}
	}
}

// rebuild recreates the index from a snapshot of the log, holding the store
// lock only to take the snapshot: writers go on meanwhile, and the next
// catch-up indexes what they wrote.
func (m *Memory) rebuild() error {
	var all []stored
	var seq int64
	err := m.locked(false, func() (err error) {
		all, err = m.log.all()
		seq = m.log.lastSeq
		return err
	})
	if err != nil {
		return err
	}
	return memindex.Rebuild(m.opts.IndexDir, func(yield func(memindex.Doc) bool) error {
		for _, s := range all {
			if !yield(doc(s)) {
				break
			}
		}
		return nil
	}, len(all), seq, m.opts.Progress)
}
