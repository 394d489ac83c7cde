package memory

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	memindex "github.com/openheim/openheim/index/memory"
)

// Add remembers content (trimmed; 1..MaxNoteChars characters) as a new
// note with a new id.
func (m *Memory) Add(content string) (Note, error) {
	content, err := checkContent(content)
	if err != nil {
		return Note{}, err
	}
	var n Note
	err = m.change(func() ([]record, error) {
		now := m.stamp()
		n = Note{ID: m.log.nextID, Content: content, CreatedAt: now, UpdatedAt: now}
		return []record{noteRecord(m.log.lastSeq+1, opAdd, n)}, nil
	})
	return n, err
}

// Get returns note id, or an error wrapping ErrNotFound.
func (m *Memory) Get(id int64) (Note, error) {
	var s stored
	err := m.read(func() (err error) {
		s, err = m.log.get(id)
		return err
	})
	return s.Note, err
}

// Edit replaces note id's content, keeping its id and creation time. An
// edit to the same content changes nothing (not even UpdatedAt).
func (m *Memory) Edit(id int64, content string) (Note, error) {
	content, err := checkContent(content)
	if err != nil {
		return Note{}, err
	}
	var n Note
	err = m.change(func() ([]record, error) {
		old, err := m.log.get(id)
		if err != nil || old.Content == content {
			n = old.Note
			return nil, err
		}
		n = Note{ID: id, Content: content, CreatedAt: old.CreatedAt, UpdatedAt: m.stamp()}
		return []record{noteRecord(m.log.lastSeq+1, opEdit, n)}, nil
	})
	return n, err
}

// Delete forgets note id for good; its id is never reused.
func (m *Memory) Delete(id int64) error {
	return m.change(func() ([]record, error) {
		if _, ok := m.log.notes.get(id); !ok {
			return nil, &notFoundError{id}
		}
		return []record{{Seq: m.log.lastSeq + 1, Op: opDelete, ID: id}}, nil
	})
}

// List returns every note, most recently updated first (then highest id).
func (m *Memory) List() ([]Note, error) {
	all, err := m.snapshot()
	slices.SortFunc(all, func(a, b Note) int {
		return cmp.Or(b.UpdatedAt.Compare(a.UpdatedAt), cmp.Compare(b.ID, a.ID))
	})
	return all, err
}

// Len returns the number of notes.
func (m *Memory) Len() (int, error) {
	var n int
	err := m.read(func() error { n = m.log.notes.len(); return nil })
	return n, err
}

func (m *Memory) snapshot() ([]Note, error) {
	var all []stored
	err := m.read(func() (err error) {
		all, err = m.log.all()
		return err
	})
	notes := make([]Note, len(all))
	for i, s := range all {
		notes[i] = s.Note
	}
	return notes, err
}

// Export writes every note as JSONL (one Note object a line), oldest first
// (by creation time, then id): the format Import reads.
func (m *Memory) Export(w io.Writer) error {
	all, err := m.snapshot()
	if err != nil {
		return err
	}
	slices.SortFunc(all, func(a, b Note) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for _, n := range all {
		if err := enc.Encode(n); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// Import adds the notes in r, JSONL of {"content": …, "created_at": …,
// "updated_at": …} (both times optional: now, and created_at; an "id" is
// ignored), so Export's output imports as is. Notes get new ids. A note
// whose content (trimmed) equals an existing note's, or an earlier line's,
// is skipped, so importing the same file twice adds nothing. Blank lines
// are skipped; any other bad line fails the whole import before anything
// is written. All notes are written with one fsync. It returns how many
// notes were added.
func (m *Memory) Import(r io.Reader) (int, error) {
	type line struct {
		Content   *string   `json:"content"`
		CreatedAt time.Time `json:"created_at"`
		UpdatedAt time.Time `json:"updated_at"`
	}
	var in []Note
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var l line
		if err := json.Unmarshal(b, &l); err != nil {
			return 0, fmt.Errorf("memory: import: line %d: %w", n, err)
		}
		if l.Content == nil {
			return 0, fmt.Errorf("memory: import: line %d: no \"content\"", n)
		}
		content, err := checkContent(*l.Content)
		if err != nil {
			return 0, fmt.Errorf("memory: import: line %d: %w", n, err)
		}
		in = append(in, Note{Content: content, CreatedAt: l.CreatedAt.UTC(), UpdatedAt: l.UpdatedAt.UTC()})
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("memory: import: %w", err)
	}
	added := 0
	err := m.change(func() ([]record, error) {
		existing, err := m.log.all()
		if err != nil {
			return nil, err
		}
		seen := make(map[string]bool, len(existing)+len(in))
		for _, s := range existing {
			seen[s.Content] = true
		}
		var recs []record
		now := m.stamp()
		for _, n := range in {
			if seen[n.Content] {
				continue
			}
			seen[n.Content] = true
			created, updated := n.CreatedAt, n.UpdatedAt
			if created.IsZero() {
				created = now
			}
			if updated.IsZero() {
				updated = created
			}
			i := int64(len(recs))
			recs = append(recs, noteRecord(m.log.lastSeq+1+i, opAdd,
				Note{ID: m.log.nextID + i, Content: n.Content, CreatedAt: created, UpdatedAt: updated}))
		}
		added = len(recs)
		return recs, nil
	})
	return added, err
}

// change writes the records build returns (built under the exclusive lock
// after reading others' appends, so seqs and ids are current), compacts
// the log when due, and brings the index in step. The change is durable
// once written; an index that cannot follow only costs a warning, and
// catches up on next use. It holds m.mu while it runs.
func (m *Memory) change(build func() ([]record, error)) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ixErr error
	err := m.locked(true, func() error {
		recs, err := build()
		if err != nil || len(recs) == 0 {
			return err
		}
		if err := m.log.write(recs...); err != nil {
			return err
		}
		if m.log.wantsCompaction() {
			if err := m.log.compact(); err != nil {
				m.warn(err.Error())
			}
		}
		ixErr = m.withIndex(false, func(*memindex.Index) error { return nil })
		return nil
	})
	if err == nil && errors.Is(ixErr, errRebuild) {
		ixErr = m.syncIndex()
	}
	if err == nil && ixErr != nil {
		m.warn(fmt.Sprintf("memory: the change is saved, but the index could not follow (%v); it catches up on next use", ixErr))
	}
	return err
}

// read runs fn holding m.mu and the store lock shared, on the log as other
// processes left it.
func (m *Memory) read(fn func() error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.locked(false, fn)
}

// noteRecord is the log record of op (add or edit) writing note n.
func noteRecord(seq int64, op string, n Note) record {
	return record{Seq: seq, Op: op, ID: n.ID, CreatedAt: n.CreatedAt, UpdatedAt: n.UpdatedAt, Content: n.Content}
}
