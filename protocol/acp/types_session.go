package acp

import "encoding/json"

// NewSessionRequest is the params of session/new. MCP servers are kept raw
// (stdio, http and sse shapes differ); a nil MCPServers is written as [].
type NewSessionRequest struct {
	CWD        string            `json:"cwd"`
	MCPServers []json.RawMessage `json:"mcpServers"`
	Meta       map[string]any    `json:"_meta,omitempty"`
}

func (r NewSessionRequest) MarshalJSON() ([]byte, error) {
	type plain NewSessionRequest
	r.MCPServers = nonNil(r.MCPServers)
	return json.Marshal(plain(r))
}

// EnvVariable is ACP's {name, value} pair: an environment variable of an
// MCP server (session/new's mcpServers) or of a terminal (terminal/create).
type EnvVariable struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// HTTPHeader is a header of an http MCP server: the same pair.
type HTTPHeader = EnvVariable

// NewSessionResponse is the result of session/new.
type NewSessionResponse struct {
	SessionID     string                `json:"sessionId"`
	Modes         *SessionModeState     `json:"modes,omitempty"`
	ConfigOptions []SessionConfigOption `json:"configOptions,omitempty"`
	Meta          map[string]any        `json:"_meta,omitempty"`
}

// LoadSessionRequest is the params of session/load.
type LoadSessionRequest struct {
	SessionID  string            `json:"sessionId"`
	CWD        string            `json:"cwd"`
	MCPServers []json.RawMessage `json:"mcpServers"`
	Meta       map[string]any    `json:"_meta,omitempty"`
}

func (r LoadSessionRequest) MarshalJSON() ([]byte, error) {
	type plain LoadSessionRequest
	r.MCPServers = nonNil(r.MCPServers)
	return json.Marshal(plain(r))
}

// LoadSessionResponse is the result of session/load and session/resume:
// always an object, `{}` at least (real clients reject null).
type LoadSessionResponse struct {
	Modes         *SessionModeState     `json:"modes,omitempty"`
	ConfigOptions []SessionConfigOption `json:"configOptions,omitempty"`
	Meta          map[string]any        `json:"_meta,omitempty"`
}

// ResumeSessionRequest is the params of session/resume: the same fields as
// load; the agent just does not replay.
type ResumeSessionRequest = LoadSessionRequest

// ResumeSessionResponse is the result of session/resume.
type ResumeSessionResponse = LoadSessionResponse

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// ListSessionsRequest is the params of session/list. CWD, when set,
// filters exactly; Cursor is the previous page's NextCursor.
type ListSessionsRequest struct {
	CWD    string         `json:"cwd,omitempty"`
	Cursor *string        `json:"cursor,omitempty"`
	Meta   map[string]any `json:"_meta,omitempty"`
}

// SessionInfo describes one session of a list. UpdatedAt is RFC 3339.
type SessionInfo struct {
	SessionID string         `json:"sessionId"`
	CWD       string         `json:"cwd"`
	Title     *string        `json:"title,omitempty"`
	UpdatedAt *string        `json:"updatedAt,omitempty"`
	Meta      map[string]any `json:"_meta,omitempty"`
}

// ListSessionsResponse is the result of session/list; NextCursor is absent
// on the last page. A nil Sessions is written as [].
type ListSessionsResponse struct {
	Sessions   []SessionInfo  `json:"sessions"`
	NextCursor *string        `json:"nextCursor,omitempty"`
	Meta       map[string]any `json:"_meta,omitempty"`
}

func (r ListSessionsResponse) MarshalJSON() ([]byte, error) {
	type plain ListSessionsResponse
	r.Sessions = nonNil(r.Sessions)
	return json.Marshal(plain(r))
}

// CloseSessionRequest is the params of session/close.
type CloseSessionRequest struct {
	SessionID string         `json:"sessionId"`
	Meta      map[string]any `json:"_meta,omitempty"`
}

// DeleteSessionRequest is the params of session/delete.
type DeleteSessionRequest struct {
	SessionID string         `json:"sessionId"`
	Meta      map[string]any `json:"_meta,omitempty"`
}

// EmptyResponse is the `{}` result of session/close, session/delete and
// session/set_mode.
type EmptyResponse struct {
	Meta map[string]any `json:"_meta,omitempty"`
}

// CancelNotification is the params of the session/cancel notification.
type CancelNotification struct {
	SessionID string         `json:"sessionId"`
	Meta      map[string]any `json:"_meta,omitempty"`
}

// SessionMode is one mode the agent can run a session in.
type SessionMode struct {
	ID          string         `json:"id"`
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Meta        map[string]any `json:"_meta,omitempty"`
}

// SessionModeState is the current mode and the available ones. A nil
// AvailableModes is written as [].
type SessionModeState struct {
	CurrentModeID  string        `json:"currentModeId"`
	AvailableModes []SessionMode `json:"availableModes"`
}

func (s SessionModeState) MarshalJSON() ([]byte, error) {
	type plain SessionModeState
	s.AvailableModes = nonNil(s.AvailableModes)
	return json.Marshal(plain(s))
}

// SetSessionModeRequest is the params of session/set_mode.
type SetSessionModeRequest struct {
	SessionID string         `json:"sessionId"`
	ModeID    string         `json:"modeId"`
	Meta      map[string]any `json:"_meta,omitempty"`
}

// SessionConfigOption is a session setting the client can show and change
// (ACP v1 has the type "select").
type SessionConfigOption struct {
	Type         string                      `json:"type"`
	ID           string                      `json:"id"`
	Name         string                      `json:"name"`
	Description  string                      `json:"description,omitempty"`
	Category     string                      `json:"category,omitempty"`
	CurrentValue string                      `json:"currentValue"`
	Options      []SessionConfigSelectOption `json:"options"`
	Meta         map[string]any              `json:"_meta,omitempty"`
}

// SessionConfigSelectOption is one value of a select option.
type SessionConfigSelectOption struct {
	Value       string `json:"value"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

func (o SessionConfigOption) MarshalJSON() ([]byte, error) {
	type plain SessionConfigOption
	if o.Type == "" {
		o.Type = "select"
	}
	o.Options = nonNil(o.Options)
	return json.Marshal(plain(o))
}

// SetSessionConfigOptionRequest is the params of session/set_config_option.
// The option's id is written as configId; optionId (an older name) is
// accepted on input.
type SetSessionConfigOptionRequest struct {
	SessionID string         `json:"sessionId"`
	ConfigID  string         `json:"configId"`
	Value     any            `json:"value"`
	Meta      map[string]any `json:"_meta,omitempty"`
}

func (r *SetSessionConfigOptionRequest) UnmarshalJSON(data []byte) error {
	type plain SetSessionConfigOptionRequest
	var w struct {
		plain
		OptionID string `json:"optionId"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*r = SetSessionConfigOptionRequest(w.plain)
	if r.ConfigID == "" {
		r.ConfigID = w.OptionID
	}
	return nil
}

// SetSessionConfigOptionResponse is the result of
// session/set_config_option: every option, after the change. A nil
// ConfigOptions is written as [].
type SetSessionConfigOptionResponse struct {
	ConfigOptions []SessionConfigOption `json:"configOptions"`
	Meta          map[string]any        `json:"_meta,omitempty"`
}

func (r SetSessionConfigOptionResponse) MarshalJSON() ([]byte, error) {
	type plain SetSessionConfigOptionResponse
	r.ConfigOptions = nonNil(r.ConfigOptions)
	return json.Marshal(plain(r))
}
