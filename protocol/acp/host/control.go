package host

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/openheim/openheim/protocol/acp"
)

// UnsupportedError is a call the agent did not advertise in initialize.
type UnsupportedError struct{ Agent, What string }

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("acp agent %s does not support %s (not in its initialize capabilities)", e.Agent, e.What)
}

// Capabilities are the optional calls the agent serves (seed 002's
// RuntimeCapabilities), from its initialize answer.
type Capabilities struct {
	LoadSession, ListSessions, ForkSession, ResumeSession bool
	CloseSession, DeleteSession, AdditionalDirectories    bool
	Logout                                                bool
	Prompt                                                acp.PromptCapabilities
	MCP                                                   acp.MCPCapabilities
}

// Capabilities reports what the agent offers.
func (h *Host) Capabilities() Capabilities {
	c := h.info.caps
	sc := c.SessionCapabilities
	var more struct {
		Auth struct{ Logout json.RawMessage } `json:"auth"`
		MCP  json.RawMessage                  `json:"mcpCapabilities"`
	}
	json.Unmarshal(h.info.Capabilities, &more)
	var mcp acp.MCPCapabilities
	json.Unmarshal(more.MCP, &mcp) // an odd value leaves both false
	return Capabilities{LoadSession: c.LoadSession, ListSessions: present(sc.List), ForkSession: present(sc.Fork),
		ResumeSession: present(sc.Resume), CloseSession: present(sc.Close), DeleteSession: present(sc.Delete),
		AdditionalDirectories: present(sc.AdditionalDirectories), Logout: present(more.Auth.Logout), Prompt: c.PromptCapabilities, MCP: mcp}
}

// Metadata is session id's modes, models, options and commands; ok is
// false for a session the host does not have open.
func (h *Host) Metadata(id string) (SessionMetadata, bool) {
	s := h.session(id)
	if s == nil {
		return SessionMetadata{}, false
	}
	md := s.state.get()
	md.SessionID = id
	return md, true
}

// open is session id, which the host must have open.
func (h *Host) open(id string) (*hostSession, error) {
	s := h.session(id)
	if s == nil {
		return nil, fmt.Errorf("acp agent %s: no open session %q", h.spec.Name, id)
	}
	return s, nil
}

// SetMode switches session id to mode (session/set_mode). A mode the agent
// did not list, or one in which it acts without asking (the projection's
// unsafe modes), is refused before anything is sent.
func (h *Host) SetMode(ctx context.Context, id, mode string) error {
	s, err := h.open(id)
	if err != nil {
		return err
	}
	if slices.Contains(h.opts.Projection.UnsafeModes, mode) {
		return fmt.Errorf("acp agent %s: mode %q acts without asking, outside openheim's rules; openheim does not switch to it", h.spec.Name, mode)
	}
	md := s.state.get()
	if len(md.Modes) > 0 && !slices.ContainsFunc(md.Modes, func(m Mode) bool { return m.ID == mode }) {
		return fmt.Errorf("acp agent %s has no mode %q (modes: %s)", h.spec.Name, mode, modeIDs(md.Modes))
	}
	if len(md.Modes) == 0 {
		if o, ok := optionOf(md, "mode"); ok {
			return h.SetConfigOption(ctx, id, o.ID, mode)
		}
		return fmt.Errorf("acp agent %s offers no modes for this session", h.spec.Name)
	}
	if err := h.call(ctx, acp.MethodSessionSetMode, acp.SetSessionModeRequest{SessionID: id, ModeID: mode}, nil); err != nil {
		return err
	}
	s.state.mu.Lock()
	s.state.setMode(mode)
	s.state.mu.Unlock()
	return nil
}

func modeIDs(ms []Mode) string {
	var ids []string
	for _, m := range ms {
		ids = append(ids, m.ID)
	}
	return strings.Join(ids, ", ")
}

// optionOf is the session's config option of a category (mode, model,
// thought_level).
func optionOf(md SessionMetadata, category string) (ConfigOption, bool) {
	for _, o := range md.ConfigOptions {
		if o.Category == category {
			return o, true
		}
	}
	return ConfigOption{}, false
}

// SetConfigOption sets session id's option configID to value
// (session/set_config_option). A select takes one of its choices (a
// value or a name); a boolean takes true or false. The agent's answer
// holds every option afterwards.
func (h *Host) SetConfigOption(ctx context.Context, id, configID string, value any) error {
	s, err := h.open(id)
	if err != nil {
		return err
	}
	md := s.state.get()
	i := slices.IndexFunc(md.ConfigOptions, func(o ConfigOption) bool { return o.ID == configID })
	if i < 0 {
		return fmt.Errorf("acp agent %s has no option %q for this session (options: %s)", h.spec.Name, configID, optionIDs(md.ConfigOptions))
	}
	o := md.ConfigOptions[i]
	if value, err = o.accept(value); err != nil {
		return fmt.Errorf("acp agent %s: option %s: %w", h.spec.Name, configID, err)
	}
	if o.Category == "mode" && slices.Contains(h.opts.Projection.UnsafeModes, fmt.Sprint(value)) {
		return fmt.Errorf("acp agent %s: mode %q acts without asking, outside openheim's rules; openheim does not switch to it", h.spec.Name, value)
	}
	var raw json.RawMessage
	req := acp.SetSessionConfigOptionRequest{SessionID: id, ConfigID: configID, Value: value}
	if err := h.call(ctx, acp.MethodSessionSetConfigOption, req, &raw); err != nil {
		return err
	}
	s.state.mu.Lock()
	defer s.state.mu.Unlock()
	if v, ok := fields(raw)["configOptions"]; ok {
		s.state.md.ConfigOptions = parseConfigOptions(v)
	} else if i < len(s.state.md.ConfigOptions) && s.state.md.ConfigOptions[i].ID == configID {
		s.state.md.ConfigOptions[i].Value = value
	}
	if o.Category == "mode" {
		s.state.md.CurrentModeID = fmt.Sprint(value)
	}
	return nil
}

func optionIDs(os []ConfigOption) string {
	if len(os) == 0 {
		return "none"
	}
	var ids []string
	for _, o := range os {
		ids = append(ids, o.ID)
	}
	return strings.Join(ids, ", ")
}

// accept checks value against the option: a select's choice by value or
// name (the value is returned), a boolean's true/false.
func (o ConfigOption) accept(value any) (any, error) {
	s := fmt.Sprint(value)
	if o.Type == "boolean" {
		switch s {
		case "true", "on":
			return true, nil
		case "false", "off":
			return false, nil
		}
		return nil, fmt.Errorf("%q is not true or false", s)
	}
	if len(o.Choices) == 0 {
		return s, nil
	}
	var vals []string
	for _, c := range o.Choices {
		if c.Value == s || strings.EqualFold(c.Name, s) {
			return c.Value, nil
		}
		vals = append(vals, c.Value)
	}
	return nil, fmt.Errorf("%q is not one of its values (%s)", s, strings.Join(vals, ", "))
}

// methodSetModel is the older model selector (SessionModelState), which
// agents such as claude-agent-acp still serve beside the model option.
const methodSetModel = "session/set_model"

// SetModel switches session id's model with the selector of the ACP
// schema the agent speaks: its config option of category "model"
// (schema 1.x), else session/set_model over its models list.
func (h *Host) SetModel(ctx context.Context, id, model string) error {
	s, err := h.open(id)
	if err != nil {
		return err
	}
	md := s.state.get()
	if o, ok := optionOf(md, "model"); ok {
		return h.SetConfigOption(ctx, id, o.ID, model)
	}
	if len(md.Models) == 0 {
		return fmt.Errorf("acp agent %s offers no model selector for this session", h.spec.Name)
	}
	var ids []string
	found := false
	for _, m := range md.Models {
		if m.ID == model || strings.EqualFold(m.Name, model) {
			model, found = m.ID, true
			break
		}
		ids = append(ids, m.ID)
	}
	if !found {
		return fmt.Errorf("acp agent %s has no model %q (models: %s)", h.spec.Name, model, strings.Join(ids, ", "))
	}
	if err := h.call(ctx, methodSetModel, map[string]string{"sessionId": id, "modelId": model}, nil); err != nil {
		return err
	}
	s.state.mu.Lock()
	s.state.md.CurrentModelID = model
	s.state.mu.Unlock()
	return nil
}
