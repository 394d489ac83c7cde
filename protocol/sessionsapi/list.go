package sessionsapi

import (
	"net/http"
	"slices"
	"strings"

	"github.com/openheim/openheim/runtime/history"
)

func (a *API) handleListSessions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p, err := parsePage(q, "desc")
	if err != nil {
		writeError(w, err)
		return
	}
	kind := q.Get("kind")
	switch kind {
	case "":
		kind = "default"
	case "default", "sub_agent", "any":
	default:
		writeError(w, badRequest(`kind must be "default", "sub_agent" or "any", not %q`, kind))
		return
	}
	list, err := a.sessionList(q.Get("search_query"))
	if err != nil {
		writeError(w, err)
		return
	}
	// Page first, then build snapshots for the page only: a list of
	// thousands of sessions reads a few files per session shown.
	withArchived := q.Get("include_archived") == "true"
	var ids []string
	for _, s := range list {
		// default: the sessions of their own; sub_agent: subagents' runs.
		if kind == "default" && s.Parent != "" || kind == "sub_agent" && s.Parent == "" {
			continue
		}
		if !withArchived && a.sessions.archived(s.ID) {
			continue
		}
		ids = append(ids, s.ID)
	}
	page, err := paginate(ids, convID, p)
	if err != nil {
		writeError(w, err)
		return
	}
	out := List[SessionResponse]{Object: "list", Data: []SessionResponse{}, FirstID: page.FirstID, LastID: page.LastID, HasMore: page.HasMore}
	for _, id := range page.Data {
		snap, err := a.snapshot(id, false)
		if err != nil {
			continue // deleted meanwhile
		}
		out.Data = append(out.Data, snap)
	}
	writeJSON(w, http.StatusOK, out)
}

// sessionList is every session, oldest first, or those matching query
// (titles and content, through the sessions search index), best last so a
// descending page shows the best first.
func (a *API) sessionList(query string) ([]history.Session, error) {
	if strings.TrimSpace(query) != "" {
		hits, err := a.opts.Catalog.Search(query, maxPage)
		if err != nil {
			return nil, badRequest("search_query: %v", err)
		}
		out := make([]history.Session, len(hits))
		for i, h := range hits {
			out[len(hits)-1-i] = h.Session
		}
		return out, nil
	}
	list, err := a.opts.Catalog.List(history.Filter{})
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(list, func(x, y history.Session) int {
		if c := x.CreatedAt.Compare(y.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(x.ID, y.ID)
	})
	return list, nil
}
