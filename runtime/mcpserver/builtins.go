package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/permission"
	"github.com/openheim/openheim/runtime/tools"
)

// Builtins returns the options that serve cfg's built-in tools (every path
// confined to its work_dir, the shell only with allow_shell) behind its
// [permissions] rules, as `openheim mcp serve` does; the caller adds
// Version and Log.
func Builtins(cfg *config.Config, denyAsk bool) (Options, error) {
	reg, err := tools.Builtins(tools.Options{WorkDir: cfg.WorkDir, AllowShell: cfg.AllowShell})
	if err != nil {
		return Options{}, err
	}
	return Options{Tools: reg, Permit: RulesPermit(permission.Rules(cfg.Permissions), reg, denyAsk)}, nil
}

// RulesPermit judges a call by rules alone: a denied tool is refused; one
// the rules would ask about runs, since the MCP host asks its own user,
// unless denyAsk refuses it too. A tool's kind comes from reg (unknown
// tools are KindOther).
func RulesPermit(rules permission.Rules, reg *tools.Registry, denyAsk bool) func(context.Context, string, json.RawMessage) (bool, string) {
	return func(_ context.Context, tool string, _ json.RawMessage) (bool, string) {
		kind := tools.KindOther
		if t, ok := reg.Get(tool); ok {
			kind = t.Kind()
		}
		switch rules.Decide(tool, kind) {
		case permission.Deny:
			return false, "the [permissions] rules deny " + tool
		case permission.Ask:
			if denyAsk {
				return false, "the [permissions] rules ask about " + tool + " and --deny-ask refuses it"
			}
		}
		return true, ""
	}
}
