package history

import (
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/openheim/openheim/index/sessions"
	"github.com/openheim/openheim/runtime/session"
)

// List returns sessions newest first through the index. When another
// process holds the index, it falls back to reading the store (slower, same
// answer) rather than failing.
func (c *Catalog) List(f Filter) ([]Session, error) {
	ix, err := c.open()
	if errors.Is(err, sessions.ErrBusy) {
		c.warn("session index is busy in another process; listing from the store (slower)")
		return c.scan(f)
	}
	if err != nil {
		return nil, err
	}
	defer ix.Close()
	list, err := ix.List(f.index())
	return fromIndexAll(list), err
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
	ix, err := c.open()
	if err != nil {
		return nil, err
	}
	defer ix.Close()
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
