package memory

import "iter"

// noteTable maps live note ids to where their records are. Ids are small
// integers handed out in order and never reused, so a slice indexed by id
// holds them: a new process fills 100,000 entries several times faster
// than a map (no hashing, one allocation), which is most of what opening
// a large memory costs once the log's heads are cached (notes.heads). Ids
// past denseMax (only a hand-edited log has them) go to a map.
type noteTable struct {
	dense  []entry // by id; n == 0: no live note
	sparse map[int64]entry
	live   int
}

const denseMax = 1 << 24

func newNoteTable(hint int) noteTable { return noteTable{dense: make([]entry, 0, hint)} }

func (t *noteTable) get(id int64) (entry, bool) {
	if id >= 0 && id < int64(len(t.dense)) {
		e := t.dense[id]
		return e, e.n > 0
	}
	e, ok := t.sparse[id]
	return e, ok
}

// rev is the seq of note id's latest record, 0 when there is none.
func (t *noteTable) rev(id int64) int64 {
	e, _ := t.get(id)
	return e.rev
}

// put records e (n > 0) as note id's latest record.
func (t *noteTable) put(id int64, e entry) {
	if id < 0 || id >= denseMax {
		if t.sparse == nil {
			t.sparse = map[int64]entry{}
		}
		if _, ok := t.sparse[id]; !ok {
			t.live++
		}
		t.sparse[id] = e
		return
	}
	if id >= int64(len(t.dense)) {
		if id < int64(cap(t.dense)) {
			t.dense = t.dense[:id+1]
		} else {
			t.dense = append(t.dense, make([]entry, id+1-int64(len(t.dense)))...)
		}
	}
	if t.dense[id].n == 0 {
		t.live++
	}
	t.dense[id] = e
}

func (t *noteTable) del(id int64) {
	if _, ok := t.get(id); !ok {
		return
	}
	t.live--
	if id >= 0 && id < int64(len(t.dense)) {
		t.dense[id] = entry{}
		return
	}
	delete(t.sparse, id)
}

func (t *noteTable) len() int { return t.live }

// all yields every live note's id and entry, the dense ones by id.
func (t *noteTable) all() iter.Seq2[int64, entry] {
	return func(yield func(int64, entry) bool) {
		for id, e := range t.dense {
			if e.n > 0 && !yield(int64(id), e) {
				return
			}
		}
		for id, e := range t.sparse {
			if !yield(id, e) {
				return
			}
		}
	}
}
