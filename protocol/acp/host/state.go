package host

import (
	"encoding/json"
	"slices"
	"sync"
)

// SessionMetadata is what the agent says about one of its sessions (seed
// 002's RuntimeSessionMetadata): its modes, models, config options and
// commands, from the answer that opened it (session/new, load, resume,
// fork) and the updates since (current_mode_update, config_option_update,
// available_commands_update, session_info_update).
type SessionMetadata struct {
	SessionID      string
	Title          string
	UpdatedAt      string
	Modes          []Mode
	CurrentModeID  string
	Models         []Model // the older model selector (session/set_model)
	CurrentModelID string
	ConfigOptions  []ConfigOption
	Commands       []Command
}

// Mode is one of the agent's session modes.
type Mode struct{ ID, Name, Description string }

// Model is one of the models of the older selector (SessionModelState).
type Model struct{ ID, Name, Description string }

// ConfigOption is a session setting the agent offers (a select, or an
// unstable boolean). Category is mode, model, thought_level, model_config
// or the agent's own.
type ConfigOption struct {
	Type, ID, Name, Description, Category string
	Value                                 any // a string for a select, a bool for a boolean
	Choices                               []ConfigChoice
}

// ConfigChoice is one value of a select option (Group names its group
// when the agent groups them).
type ConfigChoice struct {
	Value             string
	Name, Description string
	Group             string
}

// Command is one of the agent's slash commands (available_commands_update):
// sent as the prompt "/name input".
type Command struct {
	Name, Description string
	Hint              string // what the input should be, when it takes one
}

// sessionState keeps a session's metadata; its own lock, so the updates
// that fill it never wait for the read model.
type sessionState struct {
	mu sync.Mutex
	md SessionMetadata
}

func (st *sessionState) get() SessionMetadata {
	st.mu.Lock()
	defer st.mu.Unlock()
	md := st.md
	md.Modes = slices.Clone(md.Modes)
	md.Models = slices.Clone(md.Models)
	md.ConfigOptions = slices.Clone(md.ConfigOptions)
	md.Commands = slices.Clone(md.Commands)
	return md
}

// fields decodes raw into an object of raw fields; anything else is none.
func fields(raw json.RawMessage) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	json.Unmarshal(raw, &m)
	return m
}

// absorb takes what an answer that opened the session says (every field
// is read on its own: one that does not parse leaves the others).
func (st *sessionState) absorb(raw json.RawMessage) {
	f := fields(raw)
	st.mu.Lock()
	defer st.mu.Unlock()
	if v, ok := f["modes"]; ok {
		st.md.Modes, st.md.CurrentModeID = parseModes(v)
	}
	if v, ok := f["models"]; ok {
		st.md.Models, st.md.CurrentModelID = parseModels(v)
	}
	if v, ok := f["configOptions"]; ok {
		st.md.ConfigOptions = parseConfigOptions(v)
	}
	if v, ok := f["availableCommands"]; ok {
		st.md.Commands = parseCommands(v)
	}
}

// observe takes a session/update's update, when it is one of the kinds
// the metadata follows.
func (st *sessionState) observe(raw json.RawMessage) {
	f := fields(raw)
	var kind string
	json.Unmarshal(f["sessionUpdate"], &kind)
	st.mu.Lock()
	defer st.mu.Unlock()
	switch kind {
	case "current_mode_update":
		var id string
		if json.Unmarshal(f["currentModeId"], &id) == nil && id != "" {
			st.setMode(id)
		}
	case "config_option_update":
		st.md.ConfigOptions = parseConfigOptions(f["configOptions"])
	case "available_commands_update":
		st.md.Commands = parseCommands(f["availableCommands"])
	case "session_info_update":
		var s string
		if json.Unmarshal(f["title"], &s) == nil && s != "" {
			st.md.Title = s
		}
		if json.Unmarshal(f["updatedAt"], &s) == nil && s != "" {
			st.md.UpdatedAt = s
		}
	}
}

// setMode records the current mode, in the mode config option too; mu is
// held.
func (st *sessionState) setMode(id string) {
	st.md.CurrentModeID = id
	for i := range st.md.ConfigOptions {
		if st.md.ConfigOptions[i].Category == "mode" {
			st.md.ConfigOptions[i].Value = id
		}
	}
}

func parseModes(raw json.RawMessage) ([]Mode, string) {
	f := fields(raw)
	var current string
	json.Unmarshal(f["currentModeId"], &current)
	var list []json.RawMessage
	json.Unmarshal(f["availableModes"], &list)
	var out []Mode
	for _, r := range list {
		var m Mode
		if json.Unmarshal(r, &m) == nil && m.ID != "" {
			out = append(out, m)
		}
	}
	return out, current
}

// parseModels reads SessionModelState: models as {modelId, name} (what
// agents send) or {id, name} (seed 002's ModelInfo).
func parseModels(raw json.RawMessage) ([]Model, string) {
	f := fields(raw)
	var current string
	json.Unmarshal(f["currentModelId"], &current)
	var list []json.RawMessage
	json.Unmarshal(f["availableModels"], &list)
	var out []Model
	for _, r := range list {
		var m struct{ ModelID, ID, Name, Description string }
		if json.Unmarshal(r, &m) != nil {
			continue
		}
		if m.ModelID == "" {
			m.ModelID = m.ID
		}
		if m.ModelID != "" {
			out = append(out, Model{ID: m.ModelID, Name: m.Name, Description: m.Description})
		}
	}
	return out, current
}

func parseConfigOptions(raw json.RawMessage) []ConfigOption {
	var list []json.RawMessage
	json.Unmarshal(raw, &list)
	var out []ConfigOption
	for _, r := range list {
		f := fields(r)
		var o ConfigOption
		for k, dst := range map[string]*string{"type": &o.Type, "id": &o.ID, "name": &o.Name, "description": &o.Description, "category": &o.Category} {
			json.Unmarshal(f[k], dst)
		}
		if o.ID == "" {
			continue
		}
		json.Unmarshal(f["currentValue"], &o.Value)
		o.Choices = parseChoices(f["options"])
		out = append(out, o)
	}
	return out
}

// parseChoices reads a select's options, flat or in groups ({group, name,
// options}).
func parseChoices(raw json.RawMessage) []ConfigChoice {
	var list []json.RawMessage
	json.Unmarshal(raw, &list)
	var out []ConfigChoice
	for _, r := range list {
		f := fields(r)
		if sub, ok := f["options"]; ok {
			var group string
			json.Unmarshal(f["group"], &group)
			for _, c := range parseChoices(sub) {
				c.Group = group
				out = append(out, c)
			}
			continue
		}
		var c ConfigChoice
		json.Unmarshal(f["value"], &c.Value)
		json.Unmarshal(f["name"], &c.Name)
		json.Unmarshal(f["description"], &c.Description)
		if c.Value != "" {
			out = append(out, c)
		}
	}
	return out
}

func parseCommands(raw json.RawMessage) []Command {
	var list []json.RawMessage
	json.Unmarshal(raw, &list)
	var out []Command
	for _, r := range list {
		var c struct {
			Name, Description string
			Input             *struct{ Hint string }
		}
		if json.Unmarshal(r, &c) != nil || c.Name == "" {
			continue
		}
		cmd := Command{Name: c.Name, Description: c.Description}
		if c.Input != nil {
			cmd.Hint = c.Input.Hint
		}
		out = append(out, cmd)
	}
	return out
}
