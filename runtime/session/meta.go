// Package session is the durable conversation store: history/<uuid>.json
// holds the meta (rewritten atomically), history/<uuid>.jsonl the messages
// (appended, fsynced at the end of every step).
package session

import (
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/message"
)

// Meta is seed 000's ConversationMeta.
type Meta struct {
	ID           string         `json:"id"`
	CreatedAt    time.Time      `json:"created_at"`
	UpdatedAt    time.Time      `json:"updated_at"`
	Title        *string        `json:"title"`
	Model        *string        `json:"model"`
	Provider     *string        `json:"provider"`
	Skills       []string       `json:"skills"`
	Cwd          *string        `json:"cwd"`
	ContextUsage *message.Usage `json:"context_usage,omitempty"`
	// UsageByModel is every token the session's model calls used, by
	// "provider/model" (what prices its cost: config.Price).
	UsageByModel map[string]message.Usage `json:"usage_by_model,omitempty"`
	// ACP binds a session run by an external ACP agent (prompt --agent):
	// enough to reattach to the agent's own session.
	ACP *ACPBinding `json:"acp,omitempty"`
	// Parent is set on a subagent's run, a session of its own started by
	// a turn of the parent session.
	Parent *ParentRef `json:"parent,omitempty"`
}

// ParentRef names the turn that started a subagent's session.
type ParentRef struct {
	SessionID string `json:"session_id"`
	CallID    string `json:"call_id"` // the delegating tool call
	Agent     string `json:"agent"`   // the subagent's name
}

// ParentID is the parent session's id, "" for a session of its own.
func (m Meta) ParentID() string {
	if m.Parent == nil {
		return ""
	}
	return m.Parent.SessionID
}

// ACPBinding is the external agent's side of a session. MCP servers are
// kept by name (their settings, secrets included, stay in the config).
type ACPBinding struct {
	Agent      string   `json:"agent"`
	SessionID  string   `json:"session_id"`
	Cwd        string   `json:"cwd"`
	MCPServers []string `json:"mcp_servers"`
	// Mode is the agent's session mode after the last turn, set again
	// when the session is reopened.
	Mode string `json:"mode,omitempty"`
}

// Conversation is a session's meta and messages (seed 000 Conversation).
type Conversation struct {
	Meta     Meta              `json:"meta"`
	Messages []message.Message `json:"messages"`
}

// ErrNotFound is returned for a session id with no stored session.
var ErrNotFound = errors.New("session not found")

// ErrInvalidID is returned for an id that is not a UUID.
var ErrInvalidID = errors.New("invalid session id")

// TitleLength is how many characters of the first user message make the title.
const TitleLength = 80

// NewMeta returns the meta of a new session created now.
func NewMeta(now time.Time) Meta {
	now = now.UTC()
	return Meta{ID: uuid.NewString(), CreatedAt: now, UpdatedAt: now, Skills: []string{}}
}

// ValidateID checks that id is a canonical UUID, so it is safe as a file name.
func ValidateID(id string) error {
	u, err := uuid.Parse(id)
	if err != nil || u.String() != id {
		return fmt.Errorf("%w: %q", ErrInvalidID, id)
	}
	return nil
}

// Title derives a session title from the first user message: its first
// TitleLength characters with whitespace runs collapsed.
func Title(text string) string {
	out := make([]rune, 0, TitleLength)
	space := false
	for _, r := range text {
		if r == ' ' || r == '\n' || r == '\t' || r == '\r' {
			space = len(out) > 0
			continue
		}
		if space {
			if len(out) >= TitleLength {
				break
			}
			out = append(out, ' ')
			space = false
		}
		if len(out) >= TitleLength {
			break
		}
		out = append(out, r)
	}
	return string(out)
}

// Str returns a pointer to s, or nil when s is empty.
func Str(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// AddUsage counts u, used by model ("provider/model"), in UsageByModel.
func (m *Meta) AddUsage(model string, u message.Usage) {
	if u == (message.Usage{}) {
		return
	}
	if m.UsageByModel == nil {
		m.UsageByModel = map[string]message.Usage{}
	}
	t := m.UsageByModel[model]
	t.InputTokens += u.InputTokens
	t.OutputTokens += u.OutputTokens
	t.CacheReadTokens += u.CacheReadTokens
	t.CacheCreationTokens += u.CacheCreationTokens
	m.UsageByModel[model] = t
}

// InfoEvent is the session_info_update that opens a turn on the session:
// its title, model, provider, cwd and last update, as the turn records them.
func (m Meta) InfoEvent() event.Event {
	return event.Event{SessionID: m.ID, Kind: event.SessionInfoUpdate, Info: &event.SessionInfo{
		Title: deref(m.Title), UpdatedAt: m.UpdatedAt, Model: deref(m.Model), Provider: deref(m.Provider), Cwd: deref(m.Cwd)}}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
