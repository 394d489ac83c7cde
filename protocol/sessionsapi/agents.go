package sessionsapi

import (
	"cmp"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/openheim/openheim/runtime/subagent"
)

// Agent is an agent profile as /api/agents shows it: seed 003's fields plus
// openheim's.
type Agent struct {
	// "ag_" + 24 lowercase hex for uploaded bundles, "ag_profile_<name>" for
	// agents/<name>.md, "ag_default" for the built-in agent.
	ID          string `json:"id"`
	Object      string `json:"object"` // "agent"
	Name        string `json:"name"`
	Description string `json:"description"`
	CreatedAt   int64  `json:"created_at"` // unix seconds
	// Model is as written: "provider/model" or a model name; "" is the
	// config's default.
	Model        string   `json:"model,omitempty"`
	Provider     string   `json:"provider,omitempty"`
	Instructions string   `json:"instructions,omitempty"` // the system prompt
	Skills       []string `json:"skills"`                 // never null ([] when none)
	// Tools null is every tool; a list is only these tool names.
	Tools         []string `json:"tools"`
	MaxIterations int      `json:"max_iterations,omitempty"`
	// Source is "bundle", "profile" (agents/<name>.md, read-only) or
	// "default" (read-only).
	Source string `json:"source"`
}

// Profile returns the agent as a subagent profile, the shape the engine
// runs.
func (a Agent) Profile() subagent.Profile {
	return subagent.Profile{
		Name: a.Name, Description: a.Description, Model: a.Model, Provider: a.Provider,
		Tools: a.Tools, MaxIterations: a.MaxIterations, System: a.Instructions,
	}
}

const (
	profileAgentPrefix = "ag_profile_"
	agentIDHex         = 24
	defaultAgentName   = "openheim"
	agentFile          = "agent.json"
	agentBundleFile    = "bundle.tar.gz"
)

func defaultAgent() Agent {
	return Agent{
		ID: defaultAgentID, Object: "agent", Name: defaultAgentName,
		Description: "openheim's own agent: the config's default model, system.md and default_skills",
		Skills:      []string{}, Source: "default",
	}
}

// agentStore holds the uploaded agents (dir/<id>/) and reads the profiles
// (profilesDir/<name>.md) afresh on each call: they are edited by hand.
type agentStore struct {
	dir, profilesDir string
	maxBundle        int64
	now              func() time.Time
	validate         func(Agent) error

	mu      sync.Mutex
	bundles map[string]Agent  // by id
	pending map[string]bool   // names of uploads being written
	warned  map[string]string // profile file -> the error last logged for it
}

func newAgentStore(dir, profilesDir string, maxBundle int64, now func() time.Time, validate func(Agent) error) (*agentStore, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	s := &agentStore{
		dir: dir, profilesDir: profilesDir, maxBundle: maxBundle, now: now, validate: validate,
		bundles: map[string]Agent{}, pending: map[string]bool{}, warned: map[string]string{},
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		ag, err := readAgentFile(filepath.Join(dir, e.Name(), agentFile))
		if err == nil && ag.ID != e.Name() {
			err = errors.New("its id is not its directory's name")
		}
		if err != nil {
			// An upload cut short by a crash has no agent.json: it never
			// answered 201, so it is not an agent.
			slog.Warn("agents: skipping an unreadable uploaded agent", "dir", filepath.Join(dir, e.Name()), "err", err)
			continue
		}
		s.bundles[ag.ID] = ag
	}
	return s, nil
}

// create checks the bundle r and stores it as a new agent.
func (s *agentStore) create(r io.Reader) (Agent, error) {
	data, err := readBundle(r, s.maxBundle)
	if err != nil {
		return Agent{}, err
	}
	return s.createFrom(data)
}

// createFrom is create of a bundle already read (at most the limit).
func (s *agentStore) createFrom(data []byte) (Agent, error) {
	cfg, err := bundleConfigFile(data, bundleUnpackFactor*s.maxBundle)
	if err != nil {
		return Agent{}, err
	}
	ag, err := parseBundleConfig(cfg)
	if err != nil {
		return Agent{}, err
	}
	ag.ID, ag.CreatedAt = newAgentID(), s.now().Unix()
	if s.validate != nil {
		if err := s.validate(ag); err != nil {
			return Agent{}, badRequest("%s", err)
		}
	}
	release, err := s.reserve(ag.Name)
	if err != nil {
		return Agent{}, err
	}
	defer release()
	if err := s.write(ag, data); err != nil {
		return Agent{}, err
	}
	s.mu.Lock()
	s.bundles[ag.ID] = ag
	s.mu.Unlock()
	return cloneAgent(ag), nil
}

// reserve claims name for an upload until release, which must come after
// the agent is in s.bundles: the name is taken without holding the lock
// through the disk writes, and a concurrent upload of the same name still
// sees it.
func (s *agentStore) reserve(name string) (release func(), err error) {
	profiles := s.profiles()
	s.mu.Lock()
	defer s.mu.Unlock()
	taken := func(id string) error { return conflict("an agent named %q exists (id %s)", name, id) }
	if name == defaultAgentName {
		return nil, taken(defaultAgentID)
	}
	for _, p := range profiles {
		if p.Name == name {
			return nil, taken(p.ID)
		}
	}
	for _, b := range s.bundles {
		if b.Name == name {
			return nil, taken(b.ID)
		}
	}
	if s.pending[name] {
		return nil, conflict("an agent named %q is being uploaded", name)
	}
	s.pending[name] = true
	return func() {
		s.mu.Lock()
		delete(s.pending, name)
		s.mu.Unlock()
	}, nil
}

// list returns every agent: the default first, then by created_at, ties
// by id.
func (s *agentStore) list() ([]Agent, error) {
	out := append([]Agent{defaultAgent()}, s.profiles()...)
	s.mu.Lock()
	for _, ag := range s.bundles {
		out = append(out, cloneAgent(ag))
	}
	s.mu.Unlock()
	slices.SortFunc(out[1:], func(a, b Agent) int {
		return cmp.Or(cmp.Compare(a.CreatedAt, b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	return out, nil
}

func (s *agentStore) get(id string) (Agent, error) {
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
	s.mu.Lock()
	defer s.mu.Unlock()
	ag, ok := s.bundles[id]
	if !ok {
		return Agent{}, notFound("agent %q not found", id)
	}
	return cloneAgent(ag), nil
}

// remove deletes an uploaded agent. Removing agent.json is the commit:
// once it is gone the agent does not come back on restart, whatever
// becomes of the rest of its directory.
func (s *agentStore) remove(id string) error {
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
	d := filepath.Join(s.dir, id)
	s.mu.Lock()
	if _, ok := s.bundles[id]; !ok {
		s.mu.Unlock()
		return notFound("agent %q not found", id) // removed meanwhile
	}
	if err := os.Remove(filepath.Join(d, agentFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.mu.Unlock()
		return err
	}
	delete(s.bundles, id)
	s.mu.Unlock()
	if err := os.RemoveAll(d); err != nil {
		slog.Warn("agents: removing a deleted agent's files", "dir", d, "err", err)
	}
	return nil
}

// profiles returns the agents of profilesDir/<name>.md. A malformed file
// is left out (and logged once per distinct error) rather than hiding
// every other profile.
func (s *agentStore) profiles() []Agent {
	if s.profilesDir == "" {
		return nil
	}
	profs, err := subagent.LoadProfiles(s.profilesDir)
	if err != nil {
		profs = s.profilesApart()
	}
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
			Skills: []string{}, Tools: p.Tools, MaxIterations: p.MaxIterations, Source: "profile",
		})
	}
	return out
}

// profilesApart loads the profiles one file at a time, since LoadProfiles
// fails as a whole on one bad file and subagent has no single-file parser:
// each file is copied alone into a scratch directory and loaded from there.
// Only reached when some file is malformed.
func (s *agentStore) profilesApart() map[string]subagent.Profile {
	out := map[string]subagent.Profile{}
	root, err := os.OpenRoot(s.profilesDir)
	if err != nil {
		s.warnProfile(s.profilesDir, err.Error())
		return out
	}
	defer root.Close()
	entries, err := fs.ReadDir(root.FS(), ".")
	if err != nil {
		s.warnProfile(s.profilesDir, err.Error())
		return out
	}
	scratch, err := os.MkdirTemp("", "openheim-profile-*")
	if err != nil {
		s.warnProfile(s.profilesDir, err.Error())
		return out
	}
	defer os.RemoveAll(scratch)
	for _, e := range entries {
		file := e.Name()
		if strings.HasPrefix(file, ".") || !strings.HasSuffix(file, ".md") {
			continue
		}
		path := filepath.Join(s.profilesDir, file)
		// Through the root, as LoadProfiles reads: a symlink out of the
		// directory is refused.
		data, err := root.ReadFile(file)
		if err == nil {
			err = os.WriteFile(filepath.Join(scratch, file), data, 0o600)
		}
		var one map[string]subagent.Profile
		if err == nil {
			one, err = subagent.LoadProfiles(scratch)
			os.Remove(filepath.Join(scratch, file))
		}
		if err != nil {
			s.warnProfile(path, strings.ReplaceAll(err.Error(), scratch, s.profilesDir))
			continue
		}
		s.mu.Lock()
		delete(s.warned, path)
		s.mu.Unlock()
		maps.Copy(out, one)
	}
	return out
}

// warnProfile logs a bad profile once, not on every list and get.
func (s *agentStore) warnProfile(path, msg string) {
	s.mu.Lock()
	seen := s.warned[path] == msg
	s.warned[path] = msg
	s.mu.Unlock()
	if !seen {
		slog.Warn("agents: skipping a malformed agent profile", "file", path, "err", msg)
	}
}

func cloneAgent(a Agent) Agent {
	a.Skills = slices.Clone(a.Skills)
	a.Tools = slices.Clone(a.Tools)
	return a
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
		ag, err := a.agents.create(p)
		p.Close()
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
