// Package bundle keeps the agents uploaded as bundles (a .tar.gz holding a
// config.yaml, seed 003's POST /api/agents): New checks a bundle and makes
// its agent, Store keeps agents with their bundles, and Dir is the store
// on the local disk (a store shared by several servers can stand in).
package bundle

import (
	"slices"

	"github.com/openheim/openheim/runtime/storeerr"
	"github.com/openheim/openheim/runtime/subagent"
)

// Agent is an agent profile as /api/agents shows it: seed 003's fields plus
// openheim's. An uploaded agent is stored in this shape (agent.json).
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
	// ACPAgent, when set, is the external ACP agent ([acp_agents] or a
	// preset) that runs the agent's sessions (a profile's acp_agent);
	// Model is then that agent's model.
	ACPAgent string `json:"acp_agent,omitempty"`
	// Kind is "session" for an agent that belongs to one session (seed
	// 003's session-scoped agent: uploaded with the session, or cloned for
	// a fork); its name need not be unique. "" is an agent of its own.
	Kind string `json:"kind,omitempty"`
}

// KindSession marks a session-scoped agent (Agent.Kind).
const KindSession = "session"

// Profile returns the agent as a subagent profile, the shape the engine
// runs.
func (a Agent) Profile() subagent.Profile {
	return subagent.Profile{
		Name: a.Name, Description: a.Description, Model: a.Model, Provider: a.Provider,
		Tools: a.Tools, MaxIterations: a.MaxIterations, System: a.Instructions,
	}
}

// Clone is a copy that shares no slice with a.
func (a Agent) Clone() Agent {
	a.Skills = slices.Clone(a.Skills)
	a.Tools = slices.Clone(a.Tools)
	return a
}

// IDPrefix begins the id of every uploaded agent.
const IDPrefix = "ag_"

// Store keeps uploaded agents and their bundles. Refusals are storeerr
// kinds: an unknown id ErrNotFound, a name already taken ErrConflict.
type Store interface {
	// Put stores a new agent (as New made it) with its bundle, unless an
	// agent of that name is stored or being stored; names of
	// session-scoped agents (KindSession) are not claimed.
	Put(ag Agent, bundle []byte) error
	// Bundle returns agent id's bundle as uploaded.
	Bundle(id string) ([]byte, error)
	// List returns the agents by created_at, ties by id.
	List() ([]Agent, error)
	Get(id string) (Agent, error)
	// Remove deletes an agent; once it answers, the agent is gone for
	// good, whatever becomes of its bundle's bytes.
	Remove(id string) error
}

// NameTaken is the refusal of a name that agent id already has.
func NameTaken(name, id string) error {
	return storeerr.Conflict("an agent named %q exists (id %s)", name, id)
}
