package host

import (
	"encoding/json"
	"maps"

	"github.com/openheim/openheim/runtime/permission"
)

// OpenCodeConfig is the typed form of OpenCode's config (seed 002), given
// to `opencode acp` in OPENCODE_CONFIG_CONTENT (merged over its own
// config files), so nothing is written into the work directory.
type OpenCodeConfig struct {
	Model      string // provider/model
	Permission OpenCodePermission
	Extra      map[string]any
}

// OpenCodePermission is opencode's permission block: each tool (edit,
// bash, webfetch, read, external_directory, "*" for the rest) is "allow",
// "ask" or "deny".
type OpenCodePermission map[string]string

// JSON is the config as OPENCODE_CONFIG_CONTENT takes it.
func (c OpenCodeConfig) JSON() string {
	m := maps.Clone(c.Extra)
	if m == nil {
		m = map[string]any{}
	}
	if c.Model != "" {
		m["model"] = c.Model
	}
	if len(c.Permission) > 0 {
		m["permission"] = map[string]string(c.Permission)
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// openCodeKinds are OpenCode's permission keys by the ACP kind openheim's
// rules judge their requests under.
var openCodeKinds = map[string]string{"edit": "edit", "bash": "execute", "webfetch": "fetch"}

// OpenCodeOptions are OpenCode's settings from openheim's config: every
// tool asks (so its requests reach openheim's gate), edits, commands and
// fetches are denied where openheim's rules deny their kind (commands
// without allow_shell), reads inside its directory are allowed (openheim
// allows them too) and paths outside it are denied unless
// [permissions] allow_outside names some (then asked about, and judged by
// openheim). The profile's allowed_tools and disallowed_tools (OpenCode's
// tool names) then allow or deny, its options are passed as they are.
func OpenCodeOptions(b Bounds) OpenCodeConfig {
	perm := OpenCodePermission{"*": "ask", "read": "allow", "external_directory": "deny"}
	if len(b.Rules.AllowOutside) > 0 {
		perm["external_directory"] = "ask"
	}
	for key, kind := range openCodeKinds {
		perm[key] = "ask"
		if b.kindDecision(kind) == permission.Deny {
			perm[key] = "deny"
		}
	}
	for _, t := range b.Profile.AllowedTools {
		perm[t] = "allow"
	}
	for _, t := range b.Profile.DisallowedTools {
		perm[t] = "deny"
	}
	return OpenCodeConfig{Permission: perm, Extra: b.Profile.Options}
}

// projectOpenCode gives OpenCode its config in its environment.
func projectOpenCode(b Bounds) Projection {
	return Projection{Env: map[string]string{"OPENCODE_CONFIG_CONTENT": OpenCodeOptions(b).JSON()}}
}
