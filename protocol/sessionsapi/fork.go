package sessionsapi

import (
	"context"
	"maps"
	"net/http"
	"strings"

	"github.com/openheim/openheim/runtime/session"
)

// forkRequest is POST /v1/sessions/{id}/fork.
type forkRequest struct {
	Title          *string `json:"title"`
	UpToResponseID *string `json:"up_to_response_id"`
}

func (a *API) handleFork(w http.ResponseWriter, r *http.Request) {
	id, err := a.sessionUUID(r.PathValue("session_id"))
	if err != nil {
		writeError(w, err)
		return
	}
	var req forkRequest
	if r.ContentLength != 0 {
		if err := decodeJSON(r, &req); err != nil {
			writeError(w, err)
			return
		}
	}
	forked, err := a.fork(r.Context(), id, req)
	if err != nil {
		writeError(w, err)
		return
	}
	a.writeSnapshot(w, http.StatusCreated, forked)
}

// fork copies session id (up to a response) into a new idle session with
// a clone of its agent (seed 003: a new agent id, the same bundle and
// config, so the fork can be reconfigured on its own); the built-in agent
// and the profiles are read-only and shared. A source whose agent is gone
// is a 404.
func (a *API) fork(ctx context.Context, id string, req forkRequest) (string, error) {
	conv, err := a.opts.Store.Load(id)
	if err != nil {
		return "", err
	}
	if conv.Meta.Parent != nil {
		return "", badRequest("session %s is a subagent's run (of %s): fork its parent", convID(id), convID(conv.Meta.Parent.SessionID))
	}
	upTo := -1
	if req.UpToResponseID != nil && *req.UpToResponseID != "" {
		end, ok := responseEnd(id, conv.Messages, *req.UpToResponseID)
		if !ok {
			return "", badRequest("up_to_response_id %q names no response of this session", *req.UpToResponseID)
		}
		upTo = end
	}
	s, err := a.sessions.settings(id)
	if err != nil {
		return "", err
	}
	ag, err := a.agents.get(s.AgentID)
	if err != nil {
		return "", notFound("the agent %s of session %s is gone: the session cannot be forked", s.AgentID, convID(id))
	}
	if ag.Source == "bundle" {
		clone, err := a.agents.clone(ag.ID)
		if err != nil {
			return "", err
		}
		s.AgentID = clone.ID
	}
	forked, err := a.forkSession(ctx, conv, upTo, req, s)
	if err != nil && s.AgentID != ag.ID {
		a.dropAgent(s.AgentID)
	}
	return forked, err
}

// forkSession stores the fork of conv with settings s.
func (a *API) forkSession(ctx context.Context, conv *session.Conversation, upTo int, req forkRequest, s settings) (string, error) {
	forked, err := a.forkConv(ctx, conv, upTo)
	if err != nil {
		return "", err
	}
	title := "Fork of " + deref(conv.Meta.Title)
	if req.Title != nil && strings.TrimSpace(*req.Title) != "" {
		title = *req.Title
	}
	s.Archived, s.Failed = false, ""
	s.Labels = maps.Clone(s.Labels)
	if err := a.setTitle(forked.ID, title); err == nil {
		err = a.sessions.save(forked.ID, s)
	}
	if err != nil {
		a.sessions.remove(forked.ID)
		a.opts.Store.Purge(forked.ID)
		return "", err
	}
	return forked.ID, nil
}
