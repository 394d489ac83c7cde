package sessionsapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/openheim/openheim/runtime/bundle"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
	"github.com/openheim/openheim/runtime/skills"
)

// createRequest is the JSON body of POST /v1/sessions.
type createRequest struct {
	AgentID       string            `json:"agent_id"`
	Title         *string           `json:"title"`
	InitialItems  []inputItem       `json:"initial_items"`
	Labels        map[string]string `json:"labels"`
	Workspace     *string           `json:"workspace"`
	ModelOverride *string           `json:"model_override"`
	ClientTools   []ClientTool      `json:"client_tools"`
	// Seed 003's host/runner fields: refused when set.
	HostID             json.RawMessage `json:"host_id"`
	HostType           json.RawMessage `json:"host_type"`
	Git                json.RawMessage `json:"git"`
	TerminalLaunchArgs json.RawMessage `json:"terminal_launch_args"`
	ReasoningEffort    json.RawMessage `json:"reasoning_effort"`
}

// inputItem is an item a client sends: a message (initial_items, message
// events).
type inputItem struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"` // a string or a list of parts
}

func (a *API) handleCreateSession(w http.ResponseWriter, r *http.Request) {
	if isMultipart(r) {
		a.createFromBundle(w, r)
		return
	}
	var req createRequest
	if err := decodeJSON(r, &req); err != nil {
		writeError(w, unprocessable(err))
		return
	}
	if err := unsupported(map[string]json.RawMessage{"host_id": req.HostID, "host_type": req.HostType, "git": req.Git,
		"terminal_launch_args": req.TerminalLaunchArgs, "reasoning_effort": req.ReasoningEffort}); err != nil {
		writeError(w, err)
		return
	}
	id, err := a.createSession(req)
	if err != nil {
		writeError(w, err)
		return
	}
	a.writeSnapshot(w, http.StatusCreated, id)
}

// bundleMetadata is the metadata part of a multipart create: seed 003's
// SessionCreateMetadata, no other field.
type bundleMetadata struct {
	Title              *string           `json:"title"`
	Labels             map[string]string `json:"labels"`
	Workspace          *string           `json:"workspace"`
	ReasoningEffort    json.RawMessage   `json:"reasoning_effort"`
	TerminalLaunchArgs json.RawMessage   `json:"terminal_launch_args"`
}

// createFromBundle is seed 003's multipart create: a metadata part (JSON)
// and an agent bundle, uploaded as a session-scoped agent the session is
// bound to. It is one transaction: everything is checked before anything
// is stored, and a session that cannot be stored takes its agent with it.
func (a *API) createFromBundle(w http.ResponseWriter, r *http.Request) {
	id, err := a.createBundled(r)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]string{"session_id": convID(id)})
}

func (a *API) createBundled(r *http.Request) (string, error) {
	meta, data, err := a.bundleForm(r)
	if err != nil {
		return "", err
	}
	var md bundleMetadata
	dec := json.NewDecoder(bytes.NewReader(meta))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&md); err != nil {
		return "", badRequest("metadata: %v (its fields: title, labels, workspace, reasoning_effort, terminal_launch_args)", err)
	}
	if err := unsupported(map[string]json.RawMessage{"reasoning_effort": md.ReasoningEffort,
		"terminal_launch_args": md.TerminalLaunchArgs}); err != nil {
		return "", err
	}
	ag, err := a.agents.check(data, bundle.KindSession)
	if err != nil {
		return "", err
	}
	plan, err := a.planSession(createRequest{Title: md.Title, Labels: md.Labels, Workspace: md.Workspace}, ag)
	if err != nil {
		return "", err
	}
	if err := a.agents.put(ag, data); err != nil {
		return "", err
	}
	if err := a.commitSession(plan); err != nil {
		a.dropAgent(ag.ID)
		return "", err
	}
	return plan.meta.ID, nil
}

// dropAgent removes a session-scoped agent whose session could not be
// made (or is gone).
func (a *API) dropAgent(id string) {
	if err := a.agents.bundles.Remove(id); err != nil {
		a.log.Warn("sessions api: removing a session-scoped agent", "agent", id, "err", err)
	}
}

// bundleForm reads the parts of a multipart create as they stream, each
// only up to its own limit: metadata (JSON) jsonBody bytes, the bundle the
// bundle limit. Both are required (422 when one is missing); other parts
// are skipped.
func (a *API) bundleForm(r *http.Request) (meta, bundle []byte, err error) {
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, nil, badRequest("invalid multipart body: %v", err)
	}
	for {
		p, err := mr.NextPart()
		var tooBig *http.MaxBytesError
		switch {
		case err == io.EOF:
			if meta == nil {
				return nil, nil, invalid("missing metadata part (a JSON object: title, labels, workspace)")
			}
			if bundle == nil {
				return nil, nil, invalid("missing bundle part")
			}
			return meta, bundle, nil
		case errors.As(err, &tooBig):
			return nil, nil, err
		case err != nil:
			return nil, nil, readError("invalid multipart body", err)
		}
		switch p.FormName() {
		case "metadata":
			meta, err = io.ReadAll(io.LimitReader(p, jsonBody+1))
			if err == nil && len(meta) > jsonBody {
				err = tooLarge("metadata part is over %d bytes", jsonBody)
			} else if err != nil {
				err = readError("reading the metadata part", err)
			}
		case "bundle":
			bundle, err = readBundle(p, a.opts.MaxBundleBytes)
		}
		p.Close()
		if err != nil {
			return nil, nil, err
		}
	}
}

// createSession makes a session from a JSON create: bound to the
// request's agent (a session-scoped one is cloned: it belongs to its own
// session), its history seeded with initial_items, a turn started when
// the last of them is a user message. A body the checks refuse is a 422.
func (a *API) createSession(req createRequest) (string, error) {
	agentID := req.AgentID
	if agentID == "" {
		agentID = defaultAgentID
	}
	ag, err := a.agents.get(agentID)
	if err != nil {
		return "", err
	}
	plan, err := a.planSession(req, ag)
	if err != nil {
		return "", unprocessable(err)
	}
	if ag.Kind == bundle.KindSession {
		clone, err := a.agents.clone(ag.ID)
		if err != nil {
			return "", err
		}
		plan.set.AgentID = clone.ID
		if err := a.commitSession(plan); err != nil {
			a.dropAgent(clone.ID)
			return "", err
		}
		return plan.meta.ID, nil
	}
	return plan.meta.ID, a.commitSession(plan)
}

// newSession is a create checked whole: nothing of it is stored yet.
type newSession struct {
	meta  session.Meta
	set   settings
	seed  []message.Message // initial_items stored as they are
	first *queuedInput      // the last one, a user message: the first turn's input
}

// planSession checks a create against agent ag, the config and the work
// directory, and builds the session without storing anything.
func (a *API) planSession(req createRequest, ag Agent) (*newSession, error) {
	cwd, err := a.workspace(req.Workspace)
	if err != nil {
		return nil, err
	}
	s := settings{AgentID: ag.ID, Labels: req.Labels, ClientTools: req.ClientTools}
	if s.Labels == nil {
		s.Labels = map[string]string{}
	}
	if err := a.checkClientTools(req.ClientTools); err != nil {
		return nil, err
	}
	if req.ModelOverride != nil && *req.ModelOverride != "" && ag.ACPAgent == "" {
		if _, err := a.resolve("", *req.ModelOverride); err != nil {
			return nil, badRequest("model_override: %v", err)
		}
		s.ModelOverride = req.ModelOverride
	}
	meta := session.NewMeta(a.opts.Now())
	if req.Title != nil && strings.TrimSpace(*req.Title) != "" {
		meta.Title = session.Str(session.Title(*req.Title))
	}
	meta.Cwd = session.Str(cwd)
	if ag.ACPAgent != "" {
		bindToACPAgent(ag, req, &s, &meta, cwd)
	} else if provider, model, err := a.modelFor(s, ag); err != nil {
		return nil, badRequest("%v", err)
	} else if model != "" {
		meta.Provider, meta.Model = session.Str(provider), session.Str(model)
	}
	meta.Skills = ag.Skills
	if ag.Source == "default" {
		meta.Skills = a.opts.Engine.Config.DefaultSkills
	}
	if _, err := skills.Load(a.opts.Engine.Config.SkillsDir(), meta.Skills); err != nil {
		return nil, badRequest("agent %s: %v", ag.Name, err)
	}
	meta.Skills = append([]string{}, meta.Skills...)
	p := &newSession{meta: meta, set: s}
	for i, it := range req.InitialItems {
		m, err := a.inputMessage(meta.ID, it, true)
		if err != nil {
			return nil, badRequest("initial_items[%d]: %v", i, err)
		}
		if i == len(req.InitialItems)-1 && m.Role == message.RoleUser {
			p.first = &queuedInput{msg: m}
			break
		}
		p.seed = append(p.seed, m)
	}
	return p, nil
}

// commitSession stores a planned session and starts its first turn; a
// session that cannot be stored whole is removed again. The answer waits
// (a little) for the first turn to store its input, so the snapshot shows
// every initial item.
func (a *API) commitSession(p *newSession) error {
	id := p.meta.ID
	err := a.opts.Store.Create(p.meta)
	if err != nil {
		return err
	}
	if len(p.seed) > 0 {
		err = a.opts.Store.Append(id, p.seed...)
	}
	if err == nil {
		err = a.sessions.save(id, p.set)
	}
	if err != nil {
		a.sessions.remove(id)
		if perr := a.opts.Store.Purge(id); perr != nil {
			a.log.Warn("sessions api: removing a session that could not be made", "session", id, "err", perr)
		}
		return err
	}
	if p.first == nil {
		return nil
	}
	var qid string
	var tr *tracker
	err = a.sessions.withTracker(id, func(t *tracker) (err error) {
		qid, err = t.post(p.first.msg.Content)
		tr = t
		return err
	})
	if err != nil {
		return err
	}
	tr.awaitStored(qid, initialWait)
	return nil
}

// initialWait bounds how long a create waits for its first turn to store
// the last initial item (the turn waits for MCP servers still connecting).
const initialWait = 10 * time.Second

// checkClientTools refuses client tools that clash with each other or
// with a tool of the runtime.
func (a *API) checkClientTools(ts []ClientTool) error {
	reg, err := a.opts.Engine.Tools(a.opts.Engine.Config.WorkDir, nil, false)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for i, t := range ts {
		switch {
		case t.Type != "" && t.Type != "function":
			return badRequest("client_tools[%d]: type must be \"function\"", i)
		case !validToolName(t.Name):
			return badRequest("client_tools[%d]: name %q must be 1-64 letters, digits, '_' or '-'", i, t.Name)
		case seen[t.Name]:
			return badRequest("client_tools[%d]: %q is given twice", i, t.Name)
		}
		if _, taken := reg.Get(t.Name); taken {
			return badRequest("client_tools[%d]: %q is the name of an openheim tool", i, t.Name)
		}
		if len(t.Parameters) > 0 && !json.Valid(t.Parameters) {
			return badRequest("client_tools[%d]: parameters is not JSON", i)
		}
		seen[t.Name] = true
	}
	return nil
}

func validToolName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// inputMessage turns a client's message item into a stored message;
// assistant messages are allowed only as seeds (initial_items).
func (a *API) inputMessage(id string, it inputItem, seed bool) (message.Message, error) {
	if it.Type != "" && it.Type != "message" {
		return message.Message{}, fmt.Errorf("type must be \"message\", not %q", it.Type)
	}
	role := message.RoleUser
	switch it.Role {
	case "", "user":
	case "assistant":
		if !seed {
			return message.Message{}, fmt.Errorf("role must be \"user\"")
		}
		role = message.RoleAssistant
	default:
		return message.Message{}, fmt.Errorf("role must be \"user\"%s, not %q", map[bool]string{true: " or \"assistant\""}[seed], it.Role)
	}
	blocks, err := a.contentBlocks(id, it.Content)
	if err != nil {
		return message.Message{}, err
	}
	return message.Message{Role: role, Content: blocks}, nil
}
