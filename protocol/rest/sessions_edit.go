package rest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/openheim/openheim/runtime/session"
)

// openheim's additions to seed 000's read-only session routes, for the
// built-in web client: full-text search (?q=), rename and delete.

// maxSearch caps a search's page; maxSearchDepth how far offset may page
// into the ranking (each page ranks everything before it again).
const (
	maxSearch      = 50
	maxSearchDepth = 1000
)

// searchResult is a session found by ?q=: its meta and the text that
// matched (the best-matching message around the first query word, or the
// title when only the title matched).
type searchResult struct {
	session.Meta
	Snippet string `json:"snippet"`
}

// searchSessions answers GET /api/sessions?q=TEXT: the sessions whose
// title or messages match, best first, through the sessions index, each
// with its snippet. The index returns the snippet's message number, so the
// snippet costs one message read per result.
func (s *Server) searchSessions(w http.ResponseWriter, r *http.Request, q string, offset, limit int) {
	if s.Catalog == nil {
		writeError(w, http.StatusServiceUnavailable, "search is not available")
		return
	}
	if limit <= 0 || limit > maxSearch {
		limit = maxSearch
	}
	out := []searchResult{}
	if offset >= maxSearchDepth {
		writeJSON(w, r, http.StatusOK, out)
		return
	}
	hits, err := s.Catalog.Search(q, min(offset+limit, maxSearchDepth))
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid query: "+err.Error())
		return
	}
	for _, h := range hits[min(offset, len(hits)):] {
		if m, err := s.Engine.Store.LoadMeta(h.Session.ID); err == nil {
			out = append(out, searchResult{Meta: normalize(*m), Snippet: h.Snippet})
		}
	}
	writeJSON(w, r, http.StatusOK, out)
}

// renameSession serves PATCH /api/sessions/{id} {"title": "..."}: the
// session's meta after the change.
func (s *Server) renameSession(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if session.ValidateID(id) != nil {
		writeError(w, http.StatusBadRequest, errInvalidSessionID)
		return
	}
	var body struct {
		Title *string `json:"title"`
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	err := dec.Decode(&body)
	if status, msg := bodyReadError(err); status != 0 {
		writeError(w, status, msg)
		return
	}
	if err != nil || body.Title == nil || strings.TrimSpace(*body.Title) == "" {
		writeError(w, http.StatusBadRequest, `the body must be {"title": "a new title"}`)
		return
	}
	m, err := s.Engine.Store.LoadMeta(id)
	if errors.Is(err, session.ErrNotFound) {
		writeError(w, http.StatusNotFound, errSessionNotFound)
		return
	}
	if err != nil {
		internalError(w, r, "renaming a session", err)
		return
	}
	m.Title = session.Str(session.Title(*body.Title))
	m.UpdatedAt = time.Now().UTC()
	if err := s.Engine.Store.SaveMeta(*m); err != nil {
		internalError(w, r, "renaming a session", err)
		return
	}
	writeJSON(w, r, http.StatusOK, normalize(*m))
}

// deleteSession serves DELETE /api/sessions/{id}: its running turn is
// cancelled, then it moves to the trash (history/trash, as `openheim
// sessions rm` does: recoverable).
func (s *Server) deleteSession(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if session.ValidateID(id) != nil {
		writeError(w, http.StatusBadRequest, errInvalidSessionID)
		return
	}
	if _, err := s.Engine.Store.LoadMeta(id); errors.Is(err, session.ErrNotFound) {
		writeError(w, http.StatusNotFound, errSessionNotFound)
		return
	}
	if s.Cancel != nil {
		<-s.Cancel(id)
	}
	if s.Catalog == nil {
		writeError(w, http.StatusServiceUnavailable, "deleting is not available")
		return
	}
	if err := s.Catalog.Store.Trash(id); err != nil {
		internalError(w, r, "deleting a session", err)
		return
	}
	s.Catalog.MarkDirty(id)
	writeJSON(w, r, http.StatusOK, map[string]any{"id": id, "deleted": true})
}

// bodyReadError is the answer to a request body that could not be read:
// 413 past the server's body limit, 408 when it did not arrive within the
// read timeout; 0 for anything else (a malformed body, answered by the
// caller).
func bodyReadError(err error) (int, string) {
	var tooBig *http.MaxBytesError
	var ne net.Error
	switch {
	case errors.As(err, &tooBig):
		return http.StatusRequestEntityTooLarge, fmt.Sprintf("request body over %d bytes", tooBig.Limit)
	case errors.As(err, &ne) && ne.Timeout():
		return http.StatusRequestTimeout, "the request body did not arrive within the read timeout"
	}
	return 0, ""
}
