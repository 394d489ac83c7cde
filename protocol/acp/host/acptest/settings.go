package acptest

import (
	"encoding/json"
	"slices"

	"github.com/openheim/openheim/protocol/jsonrpc"
)

// With Script.Settings, each session has what claude-agent-acp's have
// (PEERS.md): modes (FakeModes, "default" current), the older model
// selector (models, FakeModels), config options for the mode, the model
// and an effort (category thought_level, FakeEfforts), and commands
// (available_commands_update before the first prompt's updates, as
// claude-agent-acp sends one after session/new, FakeCommands).
// session/set_mode answers {} and sends current_mode_update;
// session/set_config_option answers every option; session/set_model
// answers {}. Unknown values are -32602. The settings of a session are
// per session, forks copy them.

// FakeModes, FakeModels and FakeEfforts are the values the settings take.
var (
	FakeModes   = []string{"default", "plan", "bypassPermissions"}
	FakeModels  = []string{"fake-large", "fake-small"}
	FakeEfforts = []string{"low", "medium", "high"}
)

// FakeCommands are the commands a Settings session offers.
func FakeCommands() []map[string]any {
	return []map[string]any{
		{"name": "review", "description": "Review the changes", "input": map[string]any{"hint": "what to review"}},
		{"name": "init", "description": "Write an AGENTS.md", "input": nil},
	}
}

// settings are one session's current values.
type settings struct{ mode, model, effort string }

func defaultSettings() settings {
	return settings{mode: "default", model: "fake-large", effort: "medium"}
}

func selectOption(id, name, category, current string, values []string) map[string]any {
	opts := []map[string]any{}
	for _, v := range values {
		opts = append(opts, map[string]any{"value": v, "name": v})
	}
	return map[string]any{"type": "select", "id": id, "name": name, "category": category, "currentValue": current, "options": opts}
}

func (st settings) options() []map[string]any {
	return []map[string]any{
		selectOption("mode", "Mode", "mode", st.mode, FakeModes),
		selectOption("model", "Model", "model", st.model, FakeModels),
		selectOption("effort", "Effort", "thought_level", st.effort, FakeEfforts),
	}
}

// describe adds the session's settings to an answer that opened it.
func (st settings) describe(m map[string]any) {
	modes := []map[string]any{}
	for _, id := range FakeModes {
		modes = append(modes, map[string]any{"id": id, "name": id})
	}
	models := []map[string]any{}
	for _, id := range FakeModels {
		models = append(models, map[string]any{"modelId": id, "name": id})
	}
	m["modes"] = map[string]any{"currentModeId": st.mode, "availableModes": modes}
	m["models"] = map[string]any{"currentModelId": st.model, "availableModels": models}
	m["configOptions"] = st.options()
}

// withSettings describes session id's settings in m (Script.Settings).
func (a *agent) withSettings(id string, m map[string]any) map[string]any {
	if !a.script.Settings {
		return m
	}
	a.mu.Lock()
	s := a.sessions[id]
	st := defaultSettings()
	if s != nil {
		st = s.settings
	}
	a.mu.Unlock()
	st.describe(m)
	return m
}

// announceCommands sends the commands of a session, once.
func (a *agent) announceCommands(s *session) {
	a.mu.Lock()
	done := s.announced
	s.announced = true
	a.mu.Unlock()
	if a.script.Settings && !done {
		id := s.id
		u, _ := json.Marshal(map[string]any{"sessionUpdate": "available_commands_update", "availableCommands": FakeCommands()})
		a.update(id, u)
	}
}

// setSetting serves session/set_mode, set_config_option and set_model.
func (a *agent) setSetting(method string, params json.RawMessage) (any, error) {
	if !a.script.Settings {
		return map[string]any{}, nil // accepted; there is nothing to change
	}
	var p struct {
		SessionID string `json:"sessionId"`
		ModeID    string `json:"modeId"`
		ModelID   string `json:"modelId"`
		ConfigID  string `json:"configId"`
		Value     any    `json:"value"`
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if _, err := a.lookup(p.SessionID); err != nil {
		return nil, err
	}
	key, value := p.ConfigID, ""
	switch method {
	case "session/set_mode":
		key, value = "mode", p.ModeID
	case "session/set_model":
		key, value = "model", p.ModelID
	default:
		value, _ = p.Value.(string)
	}
	a.mu.Lock()
	s := a.sessions[p.SessionID]
	st := &s.settings
	target, values := map[string]*string{"mode": &st.mode, "model": &st.model, "effort": &st.effort}[key],
		map[string][]string{"mode": FakeModes, "model": FakeModels, "effort": FakeEfforts}[key]
	if target == nil || !slices.Contains(values, value) {
		a.mu.Unlock()
		return nil, jsonrpc.NewError(jsonrpc.InvalidParams, "unknown "+key+" value "+value)
	}
	*target = value
	opts := st.options()
	a.mu.Unlock()
	if key == "mode" && method == "session/set_mode" {
		u, _ := json.Marshal(map[string]any{"sessionUpdate": "current_mode_update", "currentModeId": value})
		a.update(p.SessionID, u)
	}
	if method == "session/set_config_option" {
		return map[string]any{"configOptions": opts}, nil
	}
	return map[string]any{}, nil
}

// logout serves logout: the agent needs authenticate again (with
// AuthRequired).
func (a *agent) logout() (any, error) {
	a.mu.Lock()
	a.authed = false
	a.loggedOut++
	a.mu.Unlock()
	return map[string]any{}, nil
}
