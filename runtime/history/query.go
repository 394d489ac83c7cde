package history

import (
	"errors"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/openheim/openheim/index/sessions"
	"github.com/openheim/openheim/runtime/session"
)

// List returns sessions newest first through the index. When another
// process holds the index, it falls back to reading the store (slower, same
// answer) rather than failing. Sessions the index has not caught up with
// yet (a bulk copy into history) are read from the store, so the listing is
// complete either way; List never spends more than ListBudget indexing.
func (c *Catalog) List(f Filter) ([]Session, error) {
	before := c.listState()
	if list, ok := c.cachedList(f, before); ok {
		return list, nil
	}
	ix, pending, err := c.open(orDefault(c.ListBudget, DefaultListBudget))
	if errors.Is(err, sessions.ErrBusy) {
		c.warn("session index is busy in another process; listing from the store (slower)")
		return c.scan(f)
	}
	if err != nil {
		return nil, err
	}
	defer ix.Close()
	idx := f.index()
	if idx.Limit > 0 {
		idx.Limit += len(pending) // pending rows in the index may be dropped below
	}
	// The state is taken again while the index is held (no writer can
	// change it before the rows below are read); a listing that wrote to
	// the index (the bolt file changes again when it closes) keeps nothing,
	// the next one does.
	state := ""
	if len(pending) == 0 && c.listState() == before {
		state = before
	}
	list, err := ix.List(idx)
	if err != nil || len(pending) == 0 {
		if err == nil {
			c.remember(f, fromIndexAll(list), state)
		}
		return fromIndexAll(list), err
	}
	return c.mergePending(fromIndexAll(list), pending, f)
}

// mergePending replaces what the index says about the pending sessions
// with what the store holds, keeping the index's order (newest first, then
// id) and f.
func (c *Catalog) mergePending(list []Session, pending []string, f Filter) ([]Session, error) {
	skip := make(map[string]bool, len(pending))
	for _, id := range pending {
		skip[id] = true
	}
	out := slices.DeleteFunc(list, func(s Session) bool { return skip[s.ID] })
	for id := range skip {
		m, err := c.Store.LoadMeta(id)
		if err != nil {
			continue // trashed meanwhile, or damaged (reported when indexed)
		}
		if (f.Cwd != "" && deref(m.Cwd) != f.Cwd) || (!f.Since.IsZero() && m.UpdatedAt.Before(f.Since)) {
			continue
		}
		n, err := c.Store.MessageCount(id)
		if err != nil {
			continue
		}
		out = append(out, Session{ID: m.ID, Title: deref(m.Title), Model: deref(m.Model), Provider: deref(m.Provider),
			Cwd: deref(m.Cwd), CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt, Messages: n, Parent: m.ParentID()})
	}
	slices.SortStableFunc(out, func(a, b Session) int {
		if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

// How long one reader spends bringing sessions into the index before it
// answers: a listing stays interactive, a search waits longer because it
// can only find what is indexed.
const (
	DefaultListBudget   = 100 * time.Millisecond
	DefaultSearchBudget = time.Second
)

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// scan lists sessions from the store alone.
func (c *Catalog) scan(f Filter) ([]Session, error) {
	metas, err := c.Store.List()
	if err != nil {
		return nil, err
	}
	var out []Session
	for _, m := range metas {
		if (f.Cwd != "" && deref(m.Cwd) != f.Cwd) || (!f.Since.IsZero() && m.UpdatedAt.Before(f.Since)) {
			continue
		}
		n, err := c.Store.MessageCount(m.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, Session{ID: m.ID, Title: deref(m.Title), Model: deref(m.Model), Provider: deref(m.Provider),
			Cwd: deref(m.Cwd), CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt, Messages: n, Parent: m.ParentID()})
		if f.Limit > 0 && len(out) == f.Limit {
			break
		}
	}
	return out, nil
}

// Hit is one session found by Search.
type Hit struct {
	Session Session
	Message int     // index of the best-matching message, -1 for the title
	Score   float64 // relevance; higher is better
	Snippet string  // the matching text around the first query word
}

// Search finds sessions by the text of their messages, tool calls and
// results, and titles.
func (c *Catalog) Search(query string, limit int) ([]Hit, error) {
	hits, _, err := c.SearchBehind(query, limit)
	return hits, err
}

// SearchBehind is Search that also says how many sessions the index has not
// caught up with yet after spending SearchBudget on them: the answer comes
// from what is indexed, and may miss those.
func (c *Catalog) SearchBehind(query string, limit int) ([]Hit, int, error) {
	ix, pending, err := c.open(orDefault(c.SearchBudget, DefaultSearchBudget))
	if err != nil {
		return nil, 0, err
	}
	defer ix.Close()
	hits, err := c.search(ix, query, limit)
	return hits, len(pending), err
}

func (c *Catalog) search(ix *sessions.Index, query string, limit int) ([]Hit, error) {
	found, err := ix.Search(query, limit)
	if err != nil {
		return nil, err
	}
	words := strings.Fields(strings.ToLower(query))
	out := make([]Hit, 0, len(found))
	for _, h := range found {
		s, ok, err := ix.Get(h.SessionID)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		hit := Hit{Session: fromIndex(s), Message: h.Message, Score: h.Score, Snippet: s.Title}
		if h.Message >= 0 {
			if m, err := c.Store.LoadMessage(h.SessionID, h.Message); err == nil {
				hit.Snippet = snippet(session.SearchText(m), words)
			}
		}
		out = append(out, hit)
	}
	return out, nil
}

// snippet cuts about 120 characters of text around the first query word it
// contains, on one line.
func snippet(text string, words []string) string {
	flat := strings.Join(strings.Fields(text), " ")
	lower := strings.ToLower(flat)
	at := -1
	for _, w := range words {
		if i := strings.Index(lower, w); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	const before, width = 40, 120
	start := max(at-before, 0)
	for start > 0 && !utf8.RuneStart(flat[start]) {
		start--
	}
	end := min(start+width, len(flat))
	for end < len(flat) && !utf8.RuneStart(flat[end]) {
		end++
	}
	out := flat[start:end]
	if start > 0 {
		out = "…" + out
	}
	if end < len(flat) {
		out += "…"
	}
	return out
}

// storeIDs lists the session ids in a history directory without reading
// any file: the cheap half of the staleness check.
