package subagent

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"

	"github.com/openheim/openheim/runtime/llm"
)

// The delegate_task spec is copied byte for byte from the openheim API
// specification (seed 000), except that the description's last sentence
// lists the configured profiles where the seed shows a placeholder
// ("Available subagents: ... (lists configured profiles ...)"): the model
// gets the list, not the note about it. TestSpecMatchesSeed guards the rest.

// Name is the tool's name.
const Name = "delegate_task"

const (
	descriptionHead = "Delegate a self-contained task to a specialized subagent that runs independently with its own context, persona, and (optionally) its own model or restricted tool set. The subagent CANNOT see this conversation, so `task` must be a complete, standalone brief containing every detail it needs. Only its final answer is returned to you — its intermediate steps are not visible.\n\nPick a pre-configured subagent by `agent` name, OR define an ephemeral one inline by providing `system_prompt` (with optional `tools`, `model`, `provider`, `max_iterations`). Inline subagents exist only for this one call and are not saved. Exactly one of `agent` or `system_prompt` is required.\n\n"
	availablePrefix = "Available subagents:"
	noneConfigured  = " none configured"
	params          = `{
        "type": "object",
        "properties": {
          "task": { "type": "string" },
          "agent": { "type": "string", "description": "Name of a pre-configured subagent to delegate to. Mutually exclusive with ` + "`system_prompt`" + `." },
          "system_prompt": { "type": "string", "description": "System prompt for an ephemeral inline subagent. Mutually exclusive with ` + "`agent`" + `." },
          "tools": { "type": "array", "items": { "type": "string" }, "description": "Inline subagent only: restrict it to this set of tool names." },
          "model": { "type": "string", "description": "Inline subagent only: run it on this model instead of yours." },
          "provider": { "type": "string" },
          "max_iterations": { "type": "integer" }
        },
        "required": ["task"]
      }`
)

// Spec returns the delegate_task spec offered to a model when profiles are
// configured: the seed's, with the profiles listed one per line as
// "- name: description", sorted by name, or "none configured".
func Spec(profiles map[string]Profile) llm.ToolSpec {
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(params)); err != nil {
		panic("subagent: the delegate_task schema is not JSON: " + err.Error())
	}
	return llm.ToolSpec{Name: Name, Description: descriptionHead + availablePrefix + profileList(profiles), Parameters: buf.Bytes()}
}

func profileList(profiles map[string]Profile) string {
	if len(profiles) == 0 {
		return noneConfigured
	}
	names := sortedNames(profiles)
	var b strings.Builder
	for _, n := range names {
		b.WriteString("\n- ")
		b.WriteString(n)
		// A description is one line in the listing whatever the file held.
		if d := strings.Join(strings.Fields(profiles[n].Description), " "); d != "" {
			b.WriteString(": ")
			b.WriteString(d)
		}
	}
	return b.String()
}

func sortedNames(profiles map[string]Profile) []string {
	names := make([]string, 0, len(profiles))
	for n := range profiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
