package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/openheim/openheim/runtime/llm/embedding"
)

// pending lists notes to embed: ids, the content seqs embedded, and texts.
type pending struct {
	ids, revs []int64
	texts     []string
}

// unembedded returns up to limit (0: all) live notes without a vector of
// the configured model for their current content, newest first. The
// caller holds m.mu.
func (m *Memory) unembedded(limit int) (pending, error) {
	var p pending
	err := m.locked(false, func() error {
		if err := m.vec.refresh(); err != nil {
			return fmt.Errorf("memory: reading %s: %w", vecName, err)
		}
		type note struct{ id, rev int64 }
		var todo []note
		for id, e := range m.log.notes.all() {
			if _, ok := m.vec.valid(id, e.rev, m.opts.EmbeddingModel); !ok {
				todo = append(todo, note{id, e.rev})
			}
		}
		slices.SortFunc(todo, func(a, b note) int { return cmp.Compare(b.rev, a.rev) })
		if limit > 0 && len(todo) > limit {
			todo = todo[:limit]
		}
		for _, n := range todo {
			s, err := m.log.get(n.id)
			if err != nil {
				return err
			}
			p.ids = append(p.ids, n.id)
			p.revs = append(p.revs, n.rev)
			p.texts = append(p.texts, s.Content)
		}
		return nil
	})
	return p, err
}

// storeVectors refreshes the vectors and appends vecs, made for the first
// len(vecs) notes of p, compacting the file when it is mostly stale. The
// caller holds the store lock, exclusive when vecs is not empty.
func (m *Memory) storeVectors(p pending, vecs [][]float32) error {
	if err := m.vec.refresh(); err != nil {
		return fmt.Errorf("memory: reading %s: %w", vecName, err)
	}
	if len(vecs) == 0 {
		return nil
	}
	n := min(len(vecs), len(p.ids))
	if err := m.vec.write(m.opts.EmbeddingModel, p.ids[:n], p.revs[:n], vecs[:n]); err != nil {
		return err
	}
	return m.vec.compact(&m.log.notes, m.opts.EmbeddingModel, false)
}

// Reindex rebuilds the index from the log (reporting Progress), then, with
// an Embedder, embeds every note that has no vector of the configured
// model for its current content (a changed EmbeddingModel re-embeds them
// all), in batches, reporting Progress again from 0, and drops vectors no
// note uses any more. It returns the number of notes indexed. Other
// operations of this Memory wait for it; other processes do not.
func (m *Memory) Reindex(ctx context.Context) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.rebuild(); err != nil {
		return 0, err
	}
	if err := m.syncIndex(); err != nil { // what others wrote meanwhile
		return 0, err
	}
	var n int
	if err := m.locked(false, func() error { n = m.log.notes.len(); return nil }); err != nil {
		return 0, err
	}
	if m.opts.Embedder == nil {
		return n, nil
	}
	return n, m.embedAll(ctx)
}

// reindexBatch is how many notes one embeddings request of Reindex holds.
const reindexBatch = embedding.DefaultOpenAIBatch

func (m *Memory) embedAll(ctx context.Context) error {
	todo, err := m.unembedded(0)
	if err != nil {
		return err
	}
	total := len(todo.ids)
	for start := 0; start < total; start += reindexBatch {
		end := min(start+reindexBatch, total)
		vecs, err := m.embed(ctx, todo.texts[start:end])
		if err != nil {
			return fmt.Errorf("memory: embedding notes %d-%d of %d: %w", start+1, end, total, err)
		}
		batch := pending{ids: todo.ids[start:end], revs: todo.revs[start:end]}
		for i := range vecs {
			vecs[i] = normalize(vecs[i])
		}
		if err := m.locked(true, func() error { return m.storeVectors(batch, vecs) }); err != nil {
			return err
		}
		if m.opts.Progress != nil {
			m.opts.Progress(end, total)
		}
	}
	return m.locked(true, func() error {
		if err := m.vec.refresh(); err != nil {
			return err
		}
		return m.vec.compact(&m.log.notes, m.opts.EmbeddingModel, true)
	})
}
