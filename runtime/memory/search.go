package memory

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	memindex "github.com/openheim/openheim/index/memory"
)

// Hit is one note found by Search.
type Hit struct {
	Note
	// Score orders the hits: the keyword relevance within its tier
	// (keyword search), or the reciprocal rank fusion score (semantic).
	Score float64 `json:"score"`
}

const (
	// rrfK is reciprocal rank fusion's constant: a note scores
	// Σ 1/(rrfK + rank) over the rankings it appears in.
	rrfK = 60
	// fuseDepth is how many candidates each ranking contributes.
	fuseDepth = 50
	// backfillPerSearch bounds how many not yet embedded notes a search
	// embeds, in the same request as the query.
	backfillPerSearch   = 32
	defaultEmbedTimeout = 10 * time.Second
)

// Search returns up to topK notes for query, best first (topK <= 0 means
// Options.TopK; see TopK for the clamp).
//
// Keyword ranking: notes holding the exact phrase, then all the words,
// then any (English stemming: "preferences" finds "prefer"); ties go to
// the most recently changed. With an Embedder, the query is embedded too
// (along with up to 32 notes not embedded yet, newest first), and the
// keyword and cosine-similarity rankings are fused by reciprocal rank.
//
// notice explains results of lesser quality, "" otherwise: embedding
// failed or timed out (keyword results only), or the index was busy or
// unusable (keyword results from a plain scan of the log).
func (m *Memory) Search(ctx context.Context, query string, topK int) ([]Hit, string, error) {
	query = strings.TrimSpace(query)
	if query == "" {
		return nil, "", errors.New("memory: empty query")
	}
	k := m.TopK(topK)
	if m.opts.Embedder == nil {
		m.mu.Lock()
		defer m.mu.Unlock()
		kw, notice, err := m.keyword(query, k)
		if err != nil {
			return nil, "", err
		}
		var hits []Hit
		err = m.locked(false, func() (err error) {
			hits, err = m.load(kw)
			return err
		})
		return hits, notice, err
	}

	m.mu.Lock()
	kw, notice, err := m.keyword(query, fuseDepth)
	var todo pending
	if err == nil {
		todo, err = m.unembedded(backfillPerSearch)
	}
	m.mu.Unlock()
	if err != nil {
		return nil, "", err
	}
	// The embeddings request runs without the lock: it may take seconds.
	q, vecs, eerr := m.embedQuery(ctx, query, todo.texts)
	if err := ctx.Err(); err != nil {
		return nil, "", err // the caller gave up; not an embedding failure
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	var hits []Hit
	err = m.locked(len(vecs) > 0, func() (err error) {
		if eerr != nil {
			hits, err = m.load(kw[:min(k, len(kw))])
			return err
		}
		if err := m.storeVectors(todo, vecs); err != nil {
			// Losing the backfill costs a re-embedding later, not the search.
			m.warn(err.Error())
		}
		hits, err = m.load(fuse(k, ids(kw), m.nearest(q, fuseDepth)))
		return err
	})
	if eerr != nil {
		notice = joinNotice(notice, fmt.Sprintf("semantic search unavailable (embedding failed: %v); keyword results only", eerr))
	}
	return hits, notice, err
}

// keyword returns the n best keyword hits, from the index, or from a scan
// of the log (with a notice saying so) when the index is unavailable. The
// caller holds m.mu.
func (m *Memory) keyword(query string, n int) ([]memindex.Hit, string, error) {
	var hits []memindex.Hit
	var ixErr error
	search := func() error {
		ixErr = m.withIndex(true, func(ix *memindex.Index) (err error) {
			hits, err = ix.Search(query, n, m.recency)
			return err
		})
		return nil
	}
	if err := m.locked(false, search); err != nil {
		return nil, "", err
	}
	if errors.Is(ixErr, errRebuild) {
		if ixErr = m.rebuild(); ixErr == nil {
			if err := m.locked(false, search); err != nil {
				return nil, "", err
			}
		}
	}
	if ixErr == nil {
		return hits, "", nil
	}
	notice := fmt.Sprintf("memory index unavailable (%v); keyword results come from a plain scan", ixErr)
	if errors.Is(ixErr, memindex.ErrBusy) {
		notice = "memory index busy (another openheim process is using it); keyword results come from a plain scan"
	}
	err := m.locked(false, func() error {
		all, err := m.log.all()
		docs := make([]memindex.Doc, len(all))
		for i, s := range all {
			docs[i] = doc(s)
		}
		hits = memindex.Scan(query, docs, n, m.recency)
		return err
	})
	return hits, notice, err
}

// recency orders notes by their last change: the seq of their latest
// version, which grows with every add and edit like UpdatedAt does (only
// imported notes, which keep their times, differ). The caller holds the
// store lock.
func (m *Memory) recency(id int64) int64 { return m.log.notes.rev(id) }

// load reads the hits' notes; ones deleted meanwhile are left out. The
// caller holds the store lock.
func (m *Memory) load(hits []memindex.Hit) ([]Hit, error) {
	out := make([]Hit, 0, len(hits))
	for _, h := range hits {
		s, err := m.log.get(h.ID)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, Hit{Note: s.Note, Score: h.Score})
	}
	return out, nil
}

func ids(hits []memindex.Hit) []int64 {
	out := make([]int64, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

// fuse merges rankings by reciprocal rank fusion and keeps the best k;
// equal scores go to the higher (newer) id.
func fuse(k int, rankings ...[]int64) []memindex.Hit {
	score := make(map[int64]float64)
	for _, r := range rankings {
		for i, id := range r {
			score[id] += 1 / float64(rrfK+i+1)
		}
	}
	out := make([]memindex.Hit, 0, len(score))
	for id, s := range score {
		out = append(out, memindex.Hit{ID: id, Score: s})
	}
	slices.SortFunc(out, func(a, b memindex.Hit) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(b.ID, a.ID))
	})
	return out[:min(k, len(out))]
}

// nearest ranks the live notes that have a vector of the configured model
// by cosine similarity to the unit vector q. The caller holds the store
// lock and has refreshed the vectors.
func (m *Memory) nearest(q []float32, n int) []int64 {
	type scored struct {
		id  int64
		sim float64
	}
	var all []scored
	for id, e := range m.log.notes.all() {
		if v, ok := m.vec.valid(id, e.rev, m.opts.EmbeddingModel); ok && len(v) == len(q) {
			all = append(all, scored{id, dot(q, v)})
		}
	}
	slices.SortFunc(all, func(a, b scored) int { return cmp.Or(cmp.Compare(b.sim, a.sim), cmp.Compare(b.id, a.id)) })
	out := make([]int64, 0, min(n, len(all)))
	for _, s := range all[:min(n, len(all))] {
		out = append(out, s.id)
	}
	return out
}

// embedQuery embeds the query and texts in one request, bounded by
// Options.EmbedTimeout. When that fails for another reason than time (a
// note the API refuses must not cost every search its semantics), it
// retries with the query alone.
func (m *Memory) embedQuery(ctx context.Context, query string, texts []string) (q []float32, vecs [][]float32, err error) {
	timeout := m.opts.EmbedTimeout
	if timeout <= 0 {
		timeout = defaultEmbedTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, err := m.embed(ctx, append([]string{query}, texts...))
	if err != nil && len(texts) > 0 && ctx.Err() == nil {
		out, err = m.embed(ctx, []string{query})
	}
	if err != nil {
		return nil, nil, err
	}
	return normalize(out[0]), out[1:], nil
}

func (m *Memory) embed(ctx context.Context, texts []string) ([][]float32, error) {
	out, err := m.opts.Embedder.Embed(ctx, texts)
	if err == nil && len(out) != len(texts) {
		err = fmt.Errorf("got %d vectors for %d texts", len(out), len(texts))
	}
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	return out, err
}

func joinNotice(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
