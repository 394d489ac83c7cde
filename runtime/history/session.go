package history

import (
	"time"

	"github.com/openheim/openheim/index/sessions"
)

// Session is one stored conversation as listings and search show it. It is
// history's own type, not the index's: callers above the runtime never see
// the index, which is derived data that may be replaced.
type Session struct {
	ID, Title, Model, Provider, Cwd string
	CreatedAt, UpdatedAt            time.Time
	Messages                        int
	// Parent is the session whose turn started this one (a subagent's
	// run, session.Meta.Parent), "" for a session of its own.
	Parent string
}

// Filter narrows List. Zero values mean "no restriction".
type Filter struct {
	Cwd   string    // exact working directory
	Since time.Time // UpdatedAt >= Since
	Limit int       // 0 = all
}

func (f Filter) index() sessions.Filter {
	return sessions.Filter{Cwd: f.Cwd, Since: f.Since, Limit: f.Limit}
}

func fromIndex(s sessions.Session) Session {
	return Session{ID: s.ID, Title: s.Title, Model: s.Model, Provider: s.Provider, Cwd: s.Cwd,
		CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt, Messages: s.Messages, Parent: s.Parent}
}

func fromIndexAll(in []sessions.Session) []Session {
	out := make([]Session, len(in))
	for i, s := range in {
		out[i] = fromIndex(s)
	}
	return out
}
