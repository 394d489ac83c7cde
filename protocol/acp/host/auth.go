package host

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/runtime/config"
)

// AuthMethod is one of the agent's authMethods (seed 002's
// RuntimeAuthenticationMethod), read field by field: untyped (the agent
// logs in itself), env_var (Vars the client sets in the agent's
// environment) or terminal (the agent's own command with Args and Env).
type AuthMethod struct {
	ID, Name, Type, Description, Link string
	Vars                              []AuthVar
	Args                              []string
	Env                               map[string]string
}

// AuthVar is an environment variable an env_var method reads.
type AuthVar struct {
	Name     string
	Optional bool
}

// AuthMethods are the methods the agent listed in initialize; entries that
// do not parse are left out.
func (h *Host) AuthMethods() []AuthMethod {
	var out []AuthMethod
	for _, raw := range h.info.AuthMethods {
		var w struct {
			ID, Name, Type, Description, Link string
			Vars                              []AuthVar
			Args                              []string
			Env                               map[string]string
		}
		if json.Unmarshal(raw, &w) != nil || w.ID == "" {
			h.log.Debug("acp host: an auth method that does not parse", "raw", string(raw))
			continue
		}
		out = append(out, AuthMethod(w))
	}
	return out
}

// Authenticate runs the agent's authenticate with methodID.
func (h *Host) Authenticate(ctx context.Context, methodID string) error {
	return h.peer.Call(ctx, acp.MethodAuthenticate, map[string]any{"methodId": methodID}, nil)
}

// methodLogout is ACP's logout (agentCapabilities.auth.logout).
const methodLogout = "logout"

// Logout asks the agent to forget its credentials, where it offers that.
func (h *Host) Logout(ctx context.Context) error {
	if !h.Capabilities().Logout {
		return h.lacks("logout")
	}
	return h.peer.Call(ctx, methodLogout, map[string]any{}, nil)
}

// envValue is the agent's environment variable name as it starts with it:
// [acp_agents.X].env over what it inherits.
func (h *Host) envValue(name string) string {
	if v, ok := h.spec.Env[name]; ok {
		return v
	}
	env := h.opts.Environ
	if env == nil {
		env = os.Environ()
	}
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == name {
			return v
		}
	}
	return ""
}

// envMethod is an env_var method whose variables the agent's environment
// holds, if any.
func (h *Host) envMethod() (AuthMethod, bool) {
	for _, m := range h.AuthMethods() {
		if m.Type != "env_var" || len(m.Vars) == 0 {
			continue
		}
		ok := true
		for _, v := range m.Vars {
			if !v.Optional && h.envValue(v.Name) == "" {
				ok = false
			}
		}
		if ok {
			return m, true
		}
	}
	return AuthMethod{}, false
}

// authenticateFromEnv answers an agent's "authentication required" with an
// env_var method its environment satisfies, once per host; it reports
// whether the call is worth retrying.
func (h *Host) authenticateFromEnv(ctx context.Context) bool {
	m, ok := h.envMethod()
	if !ok {
		return false
	}
	h.mu.Lock()
	tried := h.authTried
	h.authTried = true
	h.mu.Unlock()
	if tried {
		return false
	}
	if err := h.Authenticate(ctx, m.ID); err != nil {
		h.log.Warn(fmt.Sprintf("acp agent %s: authenticate with %s failed: %v", h.spec.Name, m.ID, err))
		return false
	}
	h.log.Debug("acp host: authenticated", "method", m.ID)
	return true
}

// loginHint says how to log the agent in: its terminal login command, the
// variables of its env_var methods, and the login command of its kind.
func (h *Host) loginHint() string {
	var out []string
	for _, m := range h.AuthMethods() {
		switch m.Type {
		case "terminal":
			cmd := append(append([]string{h.spec.Command}, h.spec.Args...), m.Args...)
			out = append(out, "run `"+strings.Join(cmd, " ")+"`")
		case "env_var":
			var names []string
			for _, v := range m.Vars {
				names = append(names, v.Name)
			}
			if len(names) > 0 {
				out = append(out, "set "+strings.Join(names, " and ")+" in [acp_agents."+h.spec.Name+"].env")
			}
		}
	}
	if cmd := kindLogin[h.spec.Kind]; cmd != "" {
		out = append([]string{cmd}, out...)
	}
	if len(out) == 0 {
		return "log in with the agent's own CLI"
	}
	return strings.Join(out, ", or ")
}

// kindLogin is how each known agent logs in on its own.
var kindLogin = map[string]string{
	config.AgentKindClaude:   "run `claude` and type /login (or set ANTHROPIC_API_KEY in its env)",
	config.AgentKindCodex:    "run `codex login`",
	config.AgentKindOpenCode: "run `opencode auth login`",
	config.AgentKindGemini:   "run `gemini` and pick a login (or set GEMINI_API_KEY in its env)",
	config.AgentKindOpenheim: "set the provider's api_key in openheim's config",
}

// AuthRequiredError is an agent's -32000: it needs credentials first.
type AuthRequiredError struct {
	Agent   string
	Message string
	Methods []json.RawMessage // as the agent sent them, whatever their type
	// Login says how to log the agent in (its own command, the variables
	// to set).
	Login string
}

func (e *AuthRequiredError) Error() string {
	var names []string
	for _, m := range e.Methods {
		var am struct{ ID, Name, Type string }
		json.Unmarshal(m, &am)
		label := am.Name
		if label == "" {
			label = am.ID
		}
		if am.Type != "" {
			label += " (" + am.Type + ")"
		}
		names = append(names, label)
	}
	msg := fmt.Sprintf("%s: authentication required", e.Agent)
	if e.Message != "" && !strings.EqualFold(e.Message, "authentication required") {
		msg += ": " + e.Message
	}
	if len(names) > 0 {
		msg += "; the agent offers: " + strings.Join(names, ", ")
	}
	if e.Login != "" {
		msg += "; to log in: " + e.Login
	}
	return msg
}
