package sessionsapi

import (
	"cmp"
	"errors"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/openheim/openheim/runtime/bundle"
	"github.com/openheim/openheim/runtime/ids"
	"github.com/openheim/openheim/runtime/subagent"
)

// Agent is an agent as /api/agents shows it; uploaded ones are stored in
// the same shape.
type Agent = bundle.Agent

const (
	profileAgentPrefix = "ag_profile_"
	defaultAgentName   = "openheim"
)

func defaultAgent() Agent {
	return Agent{
		ID: defaultAgentID, Object: "agent", Name: defaultAgentName,
		Description: "openheim's own agent: the config's default model, system.md and default_skills",
		Skills:      []string{}, Source: "default",
	}
}

// agents is every agent the API offers: the built-in one, the profiles
// (profilesDir/<name>.md, read afresh on each call: they are edited by
// hand) and the uploaded bundles.
type agents struct {
	bundles     bundle.Store
	profilesDir string
	maxBundle   int64
	now         func() time.Time
	validate    func(Agent) error

	mu     sync.Mutex
	warned map[string]string // profile file name -> the error last logged for it
}

func newAgents(bundles bundle.Store, profilesDir string, maxBundle int64, now func() time.Time, validate func(Agent) error) *agents {
	return &agents{bundles: bundles, profilesDir: profilesDir, maxBundle: maxBundle, now: now, validate: validate,
		warned: map[string]string{}}
}

// create checks an uploaded bundle (read whole, at most maxBundle bytes)
// and stores it as a new agent.
func (s *agents) create(data []byte) (Agent, error) {
	ag, err := s.check(data, "")
	if err != nil {
		return Agent{}, err
	}
	return ag, s.put(ag, data)
}

// check makes the agent of an uploaded bundle, of kind (bundle.Agent's
// Kind), without storing it.
func (s *agents) check(data []byte, kind string) (Agent, error) {
	ag, err := bundle.New(data, s.maxBundle, s.now())
	if err != nil {
		return Agent{}, err
	}
	ag.Kind = kind
	if s.validate != nil {
		if err := s.validate(ag); err != nil {
			return Agent{}, badRequest("%s", err)
		}
	}
	return ag, nil
}

// put stores an agent check made; an agent of its own needs a name no
// other has (session-scoped ones need not).
func (s *agents) put(ag Agent, data []byte) error {
	if ag.Kind != bundle.KindSession {
		if ag.Name == defaultAgentName {
			return bundle.NameTaken(ag.Name, defaultAgentID)
		}
		for _, p := range s.profiles() {
			if p.Name == ag.Name {
				return bundle.NameTaken(ag.Name, p.ID)
			}
		}
	}
	return s.bundles.Put(ag, data)
}

// clone stores a session-scoped copy of uploaded agent id: a new id, the
// same bundle and config (seed 003's fork).
func (s *agents) clone(id string) (Agent, error) {
	data, err := s.bundles.Bundle(id)
	if err != nil {
		return Agent{}, err
	}
	ag, err := s.get(id)
	if err != nil {
		return Agent{}, err
	}
	ag.ID, ag.CreatedAt, ag.Kind = ids.New(bundle.IDPrefix), s.now().Unix(), bundle.KindSession
	return ag, s.bundles.Put(ag, data)
}

// list returns every agent but the session-scoped ones (they belong to
// their session, which names them): the default first, then by
// created_at, ties by id.
func (s *agents) list() ([]Agent, error) {
	uploaded, err := s.bundles.List()
	if err != nil {
		return nil, err
	}
	out := append([]Agent{defaultAgent()}, s.profiles()...)
	for _, ag := range uploaded {
		if ag.Kind != bundle.KindSession {
			out = append(out, ag)
		}
	}
	slices.SortStableFunc(out[1:], func(a, b Agent) int {
		return cmp.Or(cmp.Compare(a.CreatedAt, b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	return out, nil
}

func (s *agents) get(id string) (Agent, error) {
	if id == defaultAgentID {
		return defaultAgent(), nil
	}
	if strings.HasPrefix(id, profileAgentPrefix) {
		for _, p := range s.profiles() {
			if p.ID == id {
				return p, nil
			}
		}
		return Agent{}, notFound("agent %q not found", id)
	}
	return s.bundles.Get(id)
}

// remove deletes an uploaded agent; the others are read-only.
func (s *agents) remove(id string) error {
	ag, err := s.get(id)
	if err != nil {
		return err
	}
	switch ag.Source {
	case "default":
		return badRequest("agent %s is openheim's built-in agent and is read-only", id)
	case "profile":
		return badRequest("agent %s is read-only: it is the profile %s; edit or delete that file instead",
			id, filepath.Join(s.profilesDir, ag.Name+".md"))
	}
	return s.bundles.Remove(id)
}

// profiles returns the agents of profilesDir/<name>.md. A malformed file
// is left out (and logged once per distinct error) rather than hiding
// every other profile.
func (s *agents) profiles() []Agent {
	if s.profilesDir == "" {
		return nil
	}
	profs, bad, err := subagent.ReadProfiles(s.profilesDir)
	if err != nil {
		bad = map[string]error{".": err}
	}
	s.warnProfiles(bad)
	out := make([]Agent, 0, len(profs))
	for _, name := range slices.Sorted(maps.Keys(profs)) {
		p := profs[name]
		fi, err := os.Stat(filepath.Join(s.profilesDir, name+".md"))
		if err != nil {
			continue // removed since it was read
		}
		out = append(out, Agent{
			ID: profileAgentPrefix + name, Object: "agent", Name: name, Description: p.Description,
			CreatedAt: fi.ModTime().Unix(), Model: p.Model, Provider: p.Provider, Instructions: p.System,
			Skills: []string{}, Tools: p.Tools, MaxIterations: p.MaxIterations, Source: "profile", ACPAgent: p.ACPAgent,
		})
	}
	return out
}

// warnProfiles logs each bad profile file once, not on every list and get,
// and forgets the ones fixed since.
func (s *agents) warnProfiles(bad map[string]error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for path := range s.warned {
		if _, still := bad[path]; !still {
			delete(s.warned, path)
		}
	}
	for file, err := range bad {
		if msg := err.Error(); s.warned[file] != msg {
			s.warned[file] = msg
			slog.Warn("agents: skipping a malformed agent profile", "file", filepath.Join(s.profilesDir, file), "err", msg)
		}
	}
}

// bundleFormSlack is the request body beyond the bundle itself: multipart
// boundaries and part headers.
const bundleFormSlack = 64 << 10

// readBundle reads the uploaded bundle, at most max bytes of it. The bundle
// is kept whole in memory: it is small, it is checked before anything
// touches the disk, and it is stored as uploaded.
func readBundle(r io.Reader, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, readError("reading the bundle", err)
	}
	if int64(len(data)) > max {
		return nil, tooLarge("bundle is over %d bytes", max)
	}
	return data, nil
}

func (a *API) agentRoutes() []route {
	return []route{
		{pattern: "POST /api/agents", handler: a.handleCreateAgent, upload: a.opts.MaxBundleBytes + bundleFormSlack},
		{pattern: "GET /api/agents", handler: a.handleListAgents},
		{pattern: "GET /api/agents/{id}", handler: a.handleGetAgent},
		{pattern: "DELETE /api/agents/{id}", handler: a.handleDeleteAgent},
	}
}

func (a *API) handleCreateAgent(w http.ResponseWriter, r *http.Request) {
	// The bundle part is read as it streams: ParseMultipartForm would
	// spill it to a temporary file of its own.
	mr, err := r.MultipartReader()
	if err != nil {
		writeError(w, badRequest("expected a multipart/form-data body with a bundle part: %v", err))
		return
	}
	for {
		p, err := mr.NextPart()
		var tooBig *http.MaxBytesError
		switch {
		case err == io.EOF:
			writeError(w, badRequest("missing bundle part"))
			return
		case errors.As(err, &tooBig):
			writeError(w, err)
			return
		case err != nil:
			writeError(w, badRequest("invalid multipart body: %v", err))
			return
		case p.FormName() != "bundle":
			p.Close()
			continue
		}
		data, err := readBundle(p, a.opts.MaxBundleBytes)
		p.Close()
		var ag Agent
		if err == nil {
			ag, err = a.agents.create(data)
		}
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusCreated, ag)
		return
	}
}

func (a *API) handleListAgents(w http.ResponseWriter, r *http.Request) {
	p, err := parsePage(r.URL.Query(), "desc")
	if err != nil {
		writeError(w, err)
		return
	}
	all, err := a.agents.list()
	if err != nil {
		writeError(w, err)
		return
	}
	page, err := paginate(all, func(ag Agent) string { return ag.ID }, p)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, page)
}

func (a *API) handleGetAgent(w http.ResponseWriter, r *http.Request) {
	ag, err := a.agents.get(r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, ag)
}

func (a *API) handleDeleteAgent(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	ag, err := a.agents.get(id)
	if err == nil && ag.Source == "bundle" {
		// Seed 003: in-flight responses of the agent end before it goes.
		a.cancelAgent(id)
	}
	if err == nil {
		err = a.agents.remove(id)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": id, "object": "agent.deleted", "deleted": true})
}
