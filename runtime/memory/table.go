package memory

import (
	"encoding/binary"
	"iter"
	"sort"
)

// noteTable maps live note ids to where their records are. Ids are small
// integers handed out in order and never reused, so a slice indexed by id
// holds them when the log is read: no hashing, one allocation. After a
// start from notes.heads, the cache's own bytes are the table (records of
// headsRecord bytes in ascending id order, binary-searched), so a new
// process builds nothing for 100,000 notes; changes since go to a map.
// Ids past denseMax (only a hand-edited log has them) go to the map too.
type noteTable struct {
	dense  []entry         // by id; n == 0: no live note
	sparse map[int64]entry // by id; n < 0: deleted (over base)
	base   []byte          // from notes.heads: id, rev, off, n per record
	unmap  func()          // releases base (a mapping of notes.heads)
	hint   int             // dense's capacity when the first note is put
	live   int
}

const (
	denseMax    = 1 << 24
	headsRecord = 28
)

// newNoteTable is an empty table whose slice is sized for hint notes once
// the first is put: a start from notes.heads replaces the table unused,
// and allocating it up front (~3 MB at 100,000 notes) would cost that
// start a garbage collection.
func newNoteTable(hint int) noteTable { return noteTable{hint: hint} }

// withBase is a table holding exactly the records in base (validated by
// the caller: ascending ids, n > 0); release calls unmap.
func withBase(base []byte, unmap func()) noteTable {
	return noteTable{base: base, unmap: unmap, live: len(base) / headsRecord}
}

// release gives base back; the table must not be used after.
func (t *noteTable) release() {
	if t.unmap != nil {
		t.unmap()
		t.unmap, t.base = nil, nil
	}
}

func baseRecord(b []byte, i int) (int64, entry) {
	r := b[i*headsRecord:]
	return int64(binary.LittleEndian.Uint64(r)), entry{rev: int64(binary.LittleEndian.Uint64(r[8:])),
		off: int64(binary.LittleEndian.Uint64(r[16:])), n: int(binary.LittleEndian.Uint32(r[24:]))}
}

func (t *noteTable) baseGet(id int64) (entry, bool) {
	n := len(t.base) / headsRecord
	i := sort.Search(n, func(i int) bool { v, _ := baseRecord(t.base, i); return v >= id })
	if i < n {
		if v, e := baseRecord(t.base, i); v == id {
			return e, true
		}
	}
	return entry{}, false
}

func (t *noteTable) get(id int64) (entry, bool) {
	if e, ok := t.sparse[id]; ok {
		if e.n > 0 {
			return e, true
		}
		return entry{}, false // deleted over base
	}
	if id >= 0 && id < int64(len(t.dense)) && t.dense[id].n > 0 {
		return t.dense[id], true
	}
	if t.base != nil {
		return t.baseGet(id)
	}
	return entry{}, false
}

// rev is the seq of note id's latest record, 0 when there is none.
func (t *noteTable) rev(id int64) int64 {
	e, _ := t.get(id)
	return e.rev
}

// put records e (n > 0) as note id's latest record.
func (t *noteTable) put(id int64, e entry) {
	if _, had := t.get(id); !had {
		t.live++
	}
	if t.base != nil || id < 0 || id >= denseMax {
		if t.sparse == nil {
			t.sparse = map[int64]entry{}
		}
		t.sparse[id] = e
		return
	}
	if t.dense == nil && t.hint > 0 {
		t.dense = make([]entry, 0, t.hint)
	}
	if id >= int64(len(t.dense)) {
		if id < int64(cap(t.dense)) {
			t.dense = t.dense[:id+1]
		} else {
			t.dense = append(t.dense, make([]entry, id+1-int64(len(t.dense)))...)
		}
	}
	t.dense[id] = e
}

func (t *noteTable) del(id int64) {
	if _, had := t.get(id); !had {
		return
	}
	t.live--
	switch {
	case t.base != nil:
		if t.sparse == nil {
			t.sparse = map[int64]entry{}
		}
		t.sparse[id] = entry{n: -1}
	case id >= 0 && id < int64(len(t.dense)):
		t.dense[id] = entry{}
	default:
		delete(t.sparse, id)
	}
}

func (t *noteTable) len() int { return t.live }

// all yields every live note's id and entry, in no particular order.
func (t *noteTable) all() iter.Seq2[int64, entry] {
	return func(yield func(int64, entry) bool) {
		for id, e := range t.dense {
			if e.n > 0 && !yield(int64(id), e) {
				return
			}
		}
		for id, e := range t.sparse {
			if e.n > 0 && !yield(id, e) {
				return
			}
		}
		for i := range len(t.base) / headsRecord {
			id, e := baseRecord(t.base, i)
			if _, changed := t.sparse[id]; !changed && !yield(id, e) {
				return
			}
		}
	}
}
