package acp

import (
	"bytes"
	"encoding/json"

	"github.com/openheim/openheim/runtime/event"
)

// ProtocolVersion is the ACP version this package speaks.
const ProtocolVersion = 1

// Method names of ACP v1.
const (
	MethodInitialize             = "initialize"
	MethodAuthenticate           = "authenticate"
	MethodSessionNew             = "session/new"
	MethodSessionLoad            = "session/load"
	MethodSessionResume          = "session/resume"
	MethodSessionList            = "session/list"
	MethodSessionClose           = "session/close"
	MethodSessionDelete          = "session/delete"
	MethodSessionPrompt          = "session/prompt"
	MethodSessionCancel          = "session/cancel" // a notification
	MethodSessionSetMode         = "session/set_mode"
	MethodSessionSetConfigOption = "session/set_config_option"
	MethodSessionUpdate          = "session/update" // a notification, agent to client
	MethodRequestPermission      = "session/request_permission"
	MethodReadTextFile           = "fs/read_text_file"
	MethodWriteTextFile          = "fs/write_text_file"
)

// Implementation names a client or an agent.
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// FileSystemCapability says which fs/* methods the client serves.
type FileSystemCapability struct {
	ReadTextFile  bool `json:"readTextFile"`
	WriteTextFile bool `json:"writeTextFile"`
}

// ClientCapabilities is what the client offers the agent.
type ClientCapabilities struct {
	FS       FileSystemCapability `json:"fs"`
	Terminal bool                 `json:"terminal"`
	Meta     map[string]any       `json:"_meta,omitempty"`
}

// InitializeRequest is the params of initialize. ProtocolVersion is kept
// raw: ACP v1 sends the integer 1, seed 000's web client a string such as
// "0.1.0"; the answer must use the same form (ResponseVersion).
type InitializeRequest struct {
	ProtocolVersion    json.RawMessage    `json:"protocolVersion"`
	ClientCapabilities ClientCapabilities `json:"clientCapabilities"`
	ClientInfo         *Implementation    `json:"clientInfo,omitempty"`
	Meta               map[string]any     `json:"_meta,omitempty"`
}

// StringVersion reports whether the client sent protocolVersion as a
// string (seed 000's form: such connections get the inline session/update
// shape, DESIGN.md §3).
func (r InitializeRequest) StringVersion() bool {
	v := bytes.TrimSpace(r.ProtocolVersion)
	return len(v) > 0 && v[0] == '"'
}

// ResponseVersion is the protocolVersion to answer with: the client's
// string as is, otherwise the integer ProtocolVersion (the only version
// this agent speaks, whatever number the client asked for).
func (r InitializeRequest) ResponseVersion() json.RawMessage {
	if r.StringVersion() {
		return bytes.Clone(bytes.TrimSpace(r.ProtocolVersion))
	}
	return json.RawMessage("1")
}

// PromptCapabilities says which prompt content beyond text and
// resource_link the agent accepts.
type PromptCapabilities struct {
	Image           bool `json:"image"`
	Audio           bool `json:"audio"`
	EmbeddedContext bool `json:"embeddedContext"`
}

// MCPCapabilities says which MCP transports the agent can connect to.
type MCPCapabilities struct {
	HTTP bool `json:"http"`
	SSE  bool `json:"sse"`
}

// Capability is a capability that is present or not: a non-nil pointer is
// written as `{}`.
type Capability struct {
	Meta map[string]any `json:"_meta,omitempty"`
}

// SessionCapabilities lists the optional session methods the agent serves.
type SessionCapabilities struct {
	List   *Capability `json:"list,omitempty"`
	Resume *Capability `json:"resume,omitempty"`
	Close  *Capability `json:"close,omitempty"`
	Delete *Capability `json:"delete,omitempty"`
}

// AgentCapabilities is what the agent offers the client.
type AgentCapabilities struct {
	LoadSession         bool                `json:"loadSession"`
	PromptCapabilities  PromptCapabilities  `json:"promptCapabilities"`
	MCPCapabilities     MCPCapabilities     `json:"mcpCapabilities"`
	SessionCapabilities SessionCapabilities `json:"sessionCapabilities"`
	Meta                map[string]any      `json:"_meta,omitempty"`
}

// AuthMethod is one way the client can authenticate the user.
type AuthMethod struct {
	ID          string         `json:"id"`
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Meta        map[string]any `json:"_meta,omitempty"`
}

// InitializeResponse is the result of initialize. A nil AuthMethods is
// written as [].
type InitializeResponse struct {
	ProtocolVersion   json.RawMessage   `json:"protocolVersion"`
	AgentCapabilities AgentCapabilities `json:"agentCapabilities"`
	AgentInfo         *Implementation   `json:"agentInfo,omitempty"`
	AuthMethods       []AuthMethod      `json:"authMethods"`
	Meta              map[string]any    `json:"_meta,omitempty"`
}

func (r InitializeResponse) MarshalJSON() ([]byte, error) {
	type plain InitializeResponse
	if r.AuthMethods == nil {
		r.AuthMethods = []AuthMethod{}
	}
	if len(r.ProtocolVersion) == 0 {
		r.ProtocolVersion = json.RawMessage("1")
	}
	return json.Marshal(plain(r))
}

// PromptRequest is the params of session/prompt.
type PromptRequest struct {
	SessionID string         `json:"sessionId"`
	Prompt    []PromptBlock  `json:"prompt"`
	Meta      map[string]any `json:"_meta,omitempty"`
}

// PromptBlock is one block of a prompt: type text (text), image or audio
// (data, mimeType, uri?), resource_link (uri, name, mimeType?) or resource
// (resource: an EmbeddedResource, see DecodeResource). It is the same
// ContentBlock that updates carry.
type PromptBlock = ContentBlock

// EmbeddedResource is the `resource` of a resource block: text contents
// (Text set) or binary ones (Blob, base64).
type EmbeddedResource struct {
	URI      string  `json:"uri"`
	Text     *string `json:"text,omitempty"`
	Blob     *string `json:"blob,omitempty"`
	MimeType string  `json:"mimeType,omitempty"`
}

// DecodeResource decodes the block's resource.
func (b ContentBlock) DecodeResource() (EmbeddedResource, error) {
	var r EmbeddedResource
	err := json.Unmarshal(b.Resource, &r)
	return r, err
}

// PromptResponse is the result of session/prompt. Its stop reasons are
// the event stream's (event.StopEndTurn, ...), which are ACP's.
type PromptResponse struct {
	StopReason event.StopReason `json:"stopReason"`
	Usage      *Usage           `json:"usage,omitempty"`
	Meta       map[string]any   `json:"_meta,omitempty"`
}

// Permission option kinds.
const (
	PermissionAllowOnce    = "allow_once"
	PermissionAllowAlways  = "allow_always"
	PermissionRejectOnce   = "reject_once"
	PermissionRejectAlways = "reject_always"
)

// PermissionOption is a choice offered to the user.
type PermissionOption struct {
	OptionID string         `json:"optionId"`
	Name     string         `json:"name"`
	Kind     string         `json:"kind"`
	Meta     map[string]any `json:"_meta,omitempty"`
}

// PermissionToolCall is the tool call a permission request is about (a
// tool_call_update: only toolCallId is required).
type PermissionToolCall struct {
	ToolCallID string          `json:"toolCallId"`
	Title      string          `json:"title,omitempty"`
	Kind       string          `json:"kind,omitempty"`
	Status     string          `json:"status,omitempty"`
	RawInput   json.RawMessage `json:"rawInput,omitempty"`
	// Locations ({path, line?}) and Content (diffs carry a path, a
	// terminal block means a command) are kept raw: the host's gate reads
	// paths and commands from them (host/reach.go).
	Locations json.RawMessage `json:"locations,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
	Meta      map[string]any  `json:"_meta,omitempty"`
}

// RequestPermissionRequest is the params of session/request_permission
// (agent to client).
type RequestPermissionRequest struct {
	SessionID string             `json:"sessionId"`
	ToolCall  PermissionToolCall `json:"toolCall"`
	Options   []PermissionOption `json:"options"`
	Meta      map[string]any     `json:"_meta,omitempty"`
}

// Permission outcomes.
const (
	OutcomeCancelled = "cancelled"
	OutcomeSelected  = "selected"
)

// PermissionOutcome is {outcome:"cancelled"} or {outcome:"selected", optionId}.
type PermissionOutcome struct {
	Outcome  string `json:"outcome"`
	OptionID string `json:"optionId,omitempty"`
}

// RequestPermissionResponse is the result of session/request_permission.
type RequestPermissionResponse struct {
	Outcome PermissionOutcome `json:"outcome"`
	Meta    map[string]any    `json:"_meta,omitempty"`
}

// Selected returns the chosen option, ok false when the request was
// cancelled (or the outcome is unknown).
func (r RequestPermissionResponse) Selected() (optionID string, ok bool) {
	if r.Outcome.Outcome != OutcomeSelected {
		return "", false
	}
	return r.Outcome.OptionID, true
}

// ReadTextFileRequest is the params of fs/read_text_file (agent to
// client). Line is 1-based; Limit is a number of lines.
type ReadTextFileRequest struct {
	SessionID string         `json:"sessionId"`
	Path      string         `json:"path"`
	Line      *int           `json:"line,omitempty"`
	Limit     *int           `json:"limit,omitempty"`
	Meta      map[string]any `json:"_meta,omitempty"`
}

// ReadTextFileResponse is the result of fs/read_text_file.
type ReadTextFileResponse struct {
	Content string         `json:"content"`
	Meta    map[string]any `json:"_meta,omitempty"`
}

// WriteTextFileRequest is the params of fs/write_text_file (agent to
// client); the client creates the file if needed.
type WriteTextFileRequest struct {
	SessionID string         `json:"sessionId"`
	Path      string         `json:"path"`
	Content   string         `json:"content"`
	Meta      map[string]any `json:"_meta,omitempty"`
}

// WriteTextFileResponse is the result of fs/write_text_file: `{}` (clients
// may also answer null, which decodes to the zero value).
type WriteTextFileResponse struct {
	Meta map[string]any `json:"_meta,omitempty"`
}
