package rest

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/openheim/openheim/runtime/history"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
)

// listSessions serves GET /api/sessions: ConversationMeta[] newest first.
// ?limit=N (a positive integer) caps the list; ?offset=N skips the first N
// (a page: offset=100&limit=100 is the second of 100); ?cwd=/abs keeps the
// sessions whose cwd is exactly that path.
func (s *Server) listSessions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, ok := count(q, "limit", 1)
	if !ok {
		writeError(w, http.StatusBadRequest, errInvalidLimit)
		return
	}
	offset, ok := count(q, "offset", 0)
	if !ok {
		writeError(w, http.StatusBadRequest, errInvalidOffset)
		return
	}
	if text := strings.TrimSpace(q.Get("q")); text != "" {
		s.searchSessions(w, r, text, offset, limit)
		return
	}
	cwd := q.Get("cwd")
	if cwd != "" && !filepath.IsAbs(cwd) {
		writeError(w, http.StatusBadRequest, errInvalidCwd)
		return
	}
	metas, err := s.sessions(offset, limit, cwd)
	if err != nil {
		internalError(w, r, "listing sessions", err)
		return
	}
	writeJSON(w, r, http.StatusOK, metas)
}

// count reads the integer parameter name, at least least; 0 and ok when it
// is absent. Values past maxCount mean the same as maxCount, so offset +
// limit cannot overflow.
func count(q url.Values, name string, least int) (int, bool) {
	if !q.Has(name) {
		return 0, true
	}
	n, err := strconv.Atoi(q.Get(name))
	return min(n, maxCount), err == nil && n >= least
}

const maxCount = 1 << 30

// sessions lists metas newest first, never nil, from offset on. When the
// list is narrowed (limit or cwd) the catalog, if set, picks the ids and
// their order from the index, so only the page's metas are read; the metas
// themselves always come from the store, the source of truth. The whole
// list reads every meta either way, and the store alone does that faster
// (BenchmarkListSessions). When the index cannot answer, the store is
// listed instead: slower, same answer.
func (s *Server) sessions(offset, limit int, cwd string) ([]session.Meta, error) {
	if s.Catalog != nil && (limit > 0 || cwd != "") {
		f := history.Filter{Cwd: cwd}
		if limit > 0 {
			f.Limit = offset + limit
		}
		docs, err := s.Catalog.List(f)
		if err == nil {
			return s.loadMetas(docs[min(offset, len(docs)):], cwd), nil
		}
		slog.Warn("rest: session index unavailable; listing from the store", "err", err)
	}
	all, err := s.Engine.Store.List()
	if err != nil {
		return nil, err
	}
	out := make([]session.Meta, 0, len(all))
	skip := offset
	for _, m := range all {
		if cwd != "" && deref(m.Cwd) != cwd {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		out = append(out, normalize(m))
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out, nil
}

// loadMetas reads the meta of each indexed session. A session removed since
// the index answered is skipped, as is one whose meta cannot be read (the
// store's own List skips those too, so one damaged file does not hide every
// other session).
func (s *Server) loadMetas(docs []history.Session, cwd string) []session.Meta {
	out := make([]session.Meta, 0, len(docs))
	for _, d := range docs {
		m, err := s.Engine.Store.LoadMeta(d.ID)
		if errors.Is(err, session.ErrNotFound) {
			continue
		}
		if err != nil {
			slog.Warn("rest: skipping session", "id", d.ID, "err", err)
			continue
		}
		// The index may lag a write made by a store that does not mark
		// sessions for re-indexing; the meta read now is what counts.
		if cwd != "" && deref(m.Cwd) != cwd {
			continue
		}
		out = append(out, normalize(*m))
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].UpdatedAt.After(out[j].UpdatedAt) })
	return out
}

// getSession serves GET /api/sessions/{id}: the Conversation.
func (s *Server) getSession(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if session.ValidateID(id) != nil {
		writeError(w, http.StatusBadRequest, errInvalidSessionID)
		return
	}
	conv, err := s.Engine.Store.Load(id)
	switch {
	case errors.Is(err, session.ErrInvalidID):
		writeError(w, http.StatusBadRequest, errInvalidSessionID)
		return
	case errors.Is(err, session.ErrNotFound):
		writeError(w, http.StatusNotFound, errSessionNotFound)
		return
	case err != nil:
		internalError(w, r, fmt.Sprintf("loading session %s", id), err)
		return
	}
	out := session.Conversation{Meta: normalize(conv.Meta), Messages: conv.Messages}
	if out.Messages == nil {
		out.Messages = []message.Message{}
	}
	writeJSON(w, r, http.StatusOK, out)
}

// normalize makes the arrays of a meta [] rather than null whatever store
// produced it.
func normalize(m session.Meta) session.Meta {
	if m.Skills == nil {
		m.Skills = []string{}
	}
	return m
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
