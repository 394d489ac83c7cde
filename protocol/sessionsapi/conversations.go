package sessionsapi

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/openheim/openheim/runtime/history"
)

// Conversation is seed 003's conversation object: a session seen as its
// transcript.
type Conversation struct {
	ID        string  `json:"id"`
	Object    string  `json:"object"` // "conversation"
	Title     *string `json:"title"`
	CreatedAt int64   `json:"created_at"`
	UpdatedAt int64   `json:"updated_at"`
}

func (a *API) conversationRoutes() []route {
	return []route{
		{pattern: "GET /v1/conversations", handler: a.handleListConversations},
		{pattern: "GET /v1/conversations/{id}", handler: a.handleGetConversation},
		{pattern: "GET /v1/conversations/{id}/items", handler: a.handleConversationItems},
		{pattern: "PATCH /v1/conversations/{id}", handler: a.handlePatchConversation},
		{pattern: "DELETE /v1/conversations/{id}", handler: a.handleDeleteConversation},
	}
}

func conversationOf(s history.Session) Conversation {
	c := Conversation{ID: convID(s.ID), Object: "conversation", CreatedAt: unix(s.CreatedAt), UpdatedAt: unix(s.UpdatedAt)}
	if s.Title != "" {
		t := s.Title
		c.Title = &t
	}
	return c
}

func (a *API) handleListConversations(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p, err := parsePage(q, "desc")
	if err != nil {
		writeError(w, err)
		return
	}
	sortBy := q.Get("sort_by")
	if sortBy == "" {
		sortBy = "created_at"
	}
	if sortBy != "created_at" && sortBy != "updated_at" {
		writeError(w, badRequest(`sort_by must be "created_at" or "updated_at", not %q`, sortBy))
		return
	}
	list, err := a.opts.Catalog.List(history.Filter{})
	if err != nil {
		writeError(w, err)
		return
	}
	slices.SortStableFunc(list, func(x, y history.Session) int {
		c := x.CreatedAt.Compare(y.CreatedAt)
		if sortBy == "updated_at" {
			c = x.UpdatedAt.Compare(y.UpdatedAt)
		}
		if c != 0 {
			return c
		}
		return strings.Compare(x.ID, y.ID)
	})
	convs := make([]Conversation, len(list))
	for i, s := range list {
		convs[i] = conversationOf(s)
	}
	page, err := paginate(convs, func(c Conversation) string { return c.ID }, p)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, page)
}

// conversation reads session id as a conversation.
func (a *API) conversation(id string) (Conversation, error) {
	m, err := a.opts.Store.LoadMeta(id)
	if err != nil {
		return Conversation{}, err
	}
	return Conversation{ID: convID(id), Object: "conversation", Title: m.Title, CreatedAt: unix(m.CreatedAt), UpdatedAt: unix(m.UpdatedAt)}, nil
}

func (a *API) handleGetConversation(w http.ResponseWriter, r *http.Request) {
	id, err := a.sessionUUID(r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	c, err := a.conversation(id)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, c)
}

func (a *API) handleConversationItems(w http.ResponseWriter, r *http.Request) {
	id, err := a.sessionUUID(r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	a.writeItems(w, r, id)
}

func (a *API) handlePatchConversation(w http.ResponseWriter, r *http.Request) {
	id, err := a.sessionUUID(r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	// Only title (string | null) is updatable; null clears it.
	var req struct {
		Title json.RawMessage `json:"title"`
	}
	if err := decodeJSON(r, &req); err != nil {
		writeError(w, err)
		return
	}
	if err := a.patchTitle(id, req.Title); err != nil {
		writeError(w, err)
		return
	}
	c, err := a.conversation(id)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, c)
}

// patchTitle applies a title given as JSON: a string renames the session,
// null clears its title, nothing leaves it.
func (a *API) patchTitle(id string, raw json.RawMessage) error {
	if len(raw) == 0 {
		return nil
	}
	if string(raw) == "null" {
		return a.clearTitle(id)
	}
	var title string
	if err := json.Unmarshal(raw, &title); err != nil {
		return badRequest("title must be a string or null")
	}
	return a.setTitle(id, title)
}

// clearTitle removes session id's title.
func (a *API) clearTitle(id string) error {
	m, err := a.opts.Store.LoadMeta(id)
	if err != nil {
		return err
	}
	m.Title = nil
	m.UpdatedAt = a.opts.Now().UTC()
	return a.opts.Store.SaveMeta(*m)
}

func (a *API) handleDeleteConversation(w http.ResponseWriter, r *http.Request) {
	conv := r.PathValue("id")
	if err := a.deleteSession(conv); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": conv, "object": "conversation.deleted", "deleted": true})
}
