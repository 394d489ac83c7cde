package agent

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/protocol/jsonrpc"
	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/history"
	"github.com/openheim/openheim/runtime/session"
)

// Modes: code offers every tool, architect only the read-only ones.
const (
	ModeCode      = "code"
	ModeArchitect = "architect"
)

// listPage is how many sessions one session/list answer holds.
const listPage = 50

func modes(current string) *acp.SessionModeState {
	return &acp.SessionModeState{CurrentModeID: current, AvailableModes: []acp.SessionMode{
		{ID: ModeCode, Name: "Code", Description: "Reads, edits and runs what the task needs"},
		{ID: ModeArchitect, Name: "Architect", Description: "Reads and plans; changes nothing"},
	}}
}

// configOptions offers the model as provider/model among every configured one.
func (a *Agent) configOptions(ls *liveSession) []acp.SessionConfigOption {
	info := a.Engine.Config.Models()
	names := make([]string, 0, len(info.Providers))
	for name := range info.Providers {
		names = append(names, name)
	}
	sort.Strings(names)
	var opts []acp.SessionConfigSelectOption
	for _, p := range names {
		pm := info.Providers[p]
		models := pm.Models
		if len(models) == 0 {
			models = []string{pm.DefaultModel}
		}
		for _, m := range models {
			opts = append(opts, acp.SessionConfigSelectOption{Value: p + "/" + m, Name: m, Description: p})
		}
	}
	return []acp.SessionConfigOption{{ID: "model", Name: "Model", Category: "model",
		CurrentValue: ls.provider + "/" + ls.model, Options: opts}}
}

// resolveModel reads "provider/model" or a bare model (config.ResolveRef).
func resolveModel(cfg *config.Config, ref string) (provider, model string, err error) {
	r, err := cfg.ResolveRef(ref)
	if err != nil {
		return "", "", err
	}
	return r.ProviderName, r.Model, nil
}

func (a *Agent) newSession(r acp.NewSessionRequest) (any, error) {
	if name, ok := r.Meta["agent"].(string); ok && name != "" {
		return a.newAgentSession(r, name)
	}
	var provider, model string
	if ref, _ := r.Meta["model"].(string); ref != "" {
		var err error
		if provider, model, err = resolveModel(a.Engine.Config, ref); err != nil {
			return nil, invalidParams(err.Error())
		}
	}
	var skillNames []string // nil: the config's default_skills
	if raw, ok := r.Meta["skills"]; ok && raw != nil {
		list, ok := raw.([]any)
		if !ok {
			return nil, invalidParams("_meta.skills must be a list of skill names")
		}
		skillNames = []string{}
		for _, v := range list {
			name, ok := v.(string)
			if !ok {
				return nil, invalidParams("_meta.skills must be a list of skill names")
			}
			skillNames = append(skillNames, name)
		}
	}
	if r.CWD == "" {
		r.CWD = a.Engine.Config.WorkDir
	}
	if err := a.Policy.check(r.CWD, r.MCPServers); err != nil {
		return nil, err
	}
	servers, err := a.startSessionServers(r.MCPServers)
	if err != nil {
		return nil, err
	}
	meta, err := a.Engine.NewSession(r.CWD, provider, model, skillNames)
	if err != nil {
		if servers != nil {
			servers.Close()
		}
		return nil, rpcError("", err)
	}
	ls := a.attach(meta)
	ls.setMCP(servers)
	return acp.NewSessionResponse{SessionID: meta.ID, Modes: modes(ls.mode), ConfigOptions: a.configOptions(ls)}, nil
}

// open attaches a stored session to this connection, with cwd and its own
// MCP servers from the request when given.
func (a *Agent) open(r acp.LoadSessionRequest) (*liveSession, *session.Conversation, error) {
	if err := session.ValidateID(r.SessionID); err != nil {
		return nil, nil, invalidParams("invalid session id format")
	}
	conv, err := a.Engine.Store.Load(r.SessionID)
	if err != nil {
		return nil, nil, rpcError(r.SessionID, err)
	}
	cwd := r.CWD
	if cwd == "" {
		cwd = deref(conv.Meta.Cwd) // the session's own, which its turns would use
	}
	if cwd == "" {
		cwd = a.Engine.Config.WorkDir
	}
	if err := checkCwd(cwd, r.CWD == ""); err != nil {
		return nil, nil, err
	}
	if err := a.Policy.check(cwd, r.MCPServers); err != nil {
		return nil, nil, err
	}
	servers, err := a.startSessionServers(r.MCPServers)
	if err != nil {
		return nil, nil, err
	}
	ls := a.attach(conv.Meta)
	if r.CWD != "" {
		ls.cwd = r.CWD
	}
	if servers != nil {
		ls.setMCP(servers)
	}
	return ls, conv, nil
}

// checkCwd refuses, as session/new does (-32602), a cwd a session cannot
// work in; stored says it is the session's own (no cwd was given).
func checkCwd(cwd string, stored bool) error {
	if !filepath.IsAbs(cwd) {
		return invalidParams(fmt.Sprintf("cwd %q is not an absolute path", cwd))
	}
	if st, err := os.Stat(cwd); err != nil || !st.IsDir() {
		if stored {
			return invalidParams(fmt.Sprintf("the session's cwd %q is not a directory any more; give a cwd", cwd))
		}
		return invalidParams(fmt.Sprintf("cwd %q is not a directory", cwd))
	}
	return nil
}

func (a *Agent) load(r acp.LoadSessionRequest) (any, error) {
	ls, conv, err := a.open(r)
	if err != nil {
		return nil, err
	}
	reg, err := a.Engine.Tools(ls.cwd, nil, false)
	if err != nil {
		return nil, jsonrpc.NewError(jsonrpc.Internal, err.Error())
	}
	kindOf := func(name string) string {
		if t, ok := reg.Get(name); ok {
			return t.Kind()
		}
		return ""
	}
	for _, ev := range session.Replay(conv, kindOf) {
		a.Emit(ev)
	}
	if a.isInline() {
		return nil, nil // seed 000 documents `result: null`
	}
	return a.settingsAnswer(ls), nil
}

func (a *Agent) resume(r acp.ResumeSessionRequest) (any, error) {
	ls, _, err := a.open(r)
	if err != nil {
		return nil, err
	}
	return a.settingsAnswer(ls), nil
}

// settingsAnswer is a load or resume answer: the session's modes and
// options, its agent's for a session an external agent runs.
func (a *Agent) settingsAnswer(ls *liveSession) acp.LoadSessionResponse {
	if ls.agent != "" && a.External != nil {
		m, opts := a.externalSettings(ls)
		return acp.LoadSessionResponse{Modes: m, ConfigOptions: opts}
	}
	return acp.LoadSessionResponse{Modes: modes(ls.mode), ConfigOptions: a.configOptions(ls)}
}

func (a *Agent) list(r acp.ListSessionsRequest) (any, error) {
	offset := 0
	if r.Cursor != nil {
		raw, err := base64.RawURLEncoding.DecodeString(*r.Cursor)
		n, err2 := strconv.Atoi(strings.TrimPrefix(string(raw), "o:"))
		if err != nil || err2 != nil || n < 0 || !strings.HasPrefix(string(raw), "o:") {
			return nil, invalidParams("invalid cursor")
		}
		offset = n
	}
	all, err := a.listAll(r.CWD)
	if err != nil {
		return nil, jsonrpc.NewError(jsonrpc.Internal, err.Error())
	}
	resp := acp.ListSessionsResponse{Sessions: []acp.SessionInfo{}}
	for i := offset; i < len(all) && i < offset+listPage; i++ {
		s := all[i]
		info := acp.SessionInfo{SessionID: s.ID, CWD: s.Cwd, UpdatedAt: ptr(acp.Timestamp(s.UpdatedAt))}
		if info.CWD == "" {
			info.CWD = "/"
		}
		if s.Title != "" {
			info.Title = ptr(s.Title)
		}
		resp.Sessions = append(resp.Sessions, info)
	}
	if offset+listPage < len(all) {
		resp.NextCursor = ptr(base64.RawURLEncoding.EncodeToString([]byte("o:" + strconv.Itoa(offset+listPage))))
	}
	if a.isInline() {
		// seed 000 writes the last page's cursor as null
		return struct {
			Sessions   []acp.SessionInfo `json:"sessions"`
			NextCursor *string           `json:"nextCursor"`
		}{resp.Sessions, resp.NextCursor}, nil
	}
	return resp, nil
}

func (a *Agent) listAll(cwd string) ([]history.Session, error) {
	if a.Catalog != nil {
		return a.Catalog.List(history.Filter{Cwd: cwd})
	}
	metas, err := a.Engine.Store.List()
	if err != nil {
		return nil, err
	}
	var out []history.Session
	for _, m := range metas {
		if cwd == "" || deref(m.Cwd) == cwd {
			out = append(out, history.Session{ID: m.ID, Title: deref(m.Title), Cwd: deref(m.Cwd), UpdatedAt: m.UpdatedAt})
		}
	}
	return out, nil
}

func (a *Agent) closeSession(r acp.CloseSessionRequest) (any, error) {
	a.mu.Lock()
	ls := a.sessions[r.SessionID]
	delete(a.sessions, r.SessionID)
	a.mu.Unlock()
	if ls == nil {
		return nil, notFound(r.SessionID)
	}
	<-a.hub.Cancel(ls.id)
	a.hub.Unsubscribe(ls.id, a)
	ls.setMCP(nil)
	return acp.EmptyResponse{}, nil
}

func (a *Agent) deleteSession(r acp.DeleteSessionRequest) (any, error) {
	if err := session.ValidateID(r.SessionID); err != nil {
		return nil, invalidParams("invalid session id format")
	}
	if a.hub.IsRunning(r.SessionID) {
		return nil, rpcError(r.SessionID, &session.BusyError{SessionID: r.SessionID})
	}
	if err := a.Engine.Store.Trash(r.SessionID); err != nil {
		return nil, rpcError(r.SessionID, err)
	}
	a.mu.Lock()
	ls := a.sessions[r.SessionID]
	delete(a.sessions, r.SessionID)
	a.mu.Unlock()
	a.hub.Unsubscribe(r.SessionID, a)
	if ls != nil {
		ls.setMCP(nil)
	}
	return acp.EmptyResponse{}, nil
}

func (a *Agent) setMode(r acp.SetSessionModeRequest) (any, error) {
	if ls, err := a.live(r.SessionID); err == nil && ls.agent != "" && a.External != nil {
		return a.setExternal(ls, r.ModeID, "", nil)
	}
	if r.ModeID != ModeCode && r.ModeID != ModeArchitect {
		return nil, invalidParams(fmt.Sprintf("unknown mode %q (modes: code, architect)", r.ModeID))
	}
	ls, err := a.live(r.SessionID)
	if err != nil {
		return nil, err
	}
	ls.mu.Lock()
	ls.mode = r.ModeID
	ls.mu.Unlock()
	a.notify(ls.id, acp.SessionUpdate{SessionUpdate: "current_mode_update", CurrentModeID: r.ModeID})
	return acp.EmptyResponse{}, nil
}

func (a *Agent) setConfigOption(r acp.SetSessionConfigOptionRequest) (any, error) {
	if ls, err := a.live(r.SessionID); err == nil && ls.agent != "" && a.External != nil {
		return a.setExternal(ls, "", r.ConfigID, r.Value)
	}
	if r.ConfigID != "model" {
		return nil, invalidParams(fmt.Sprintf("unknown config option %q (options: model)", r.ConfigID))
	}
	ref, ok := r.Value.(string)
	if !ok {
		return nil, invalidParams("model must be a string")
	}
	ls, err := a.live(r.SessionID)
	if err != nil {
		return nil, err
	}
	provider, model, err := resolveModel(a.Engine.Config, ref)
	if err != nil {
		return nil, invalidParams(err.Error())
	}
	ls.mu.Lock()
	ls.provider, ls.model = provider, model
	ls.mu.Unlock()
	return acp.SetSessionConfigOptionResponse{ConfigOptions: a.configOptions(ls)}, nil
}

func (a *Agent) isInline() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.inline
}

func ptr[T any](v T) *T { return &v }
