package mcpserver

import (
	"context"
	"testing"

	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/permission"
	"github.com/openheim/openheim/runtime/tools"
)

// TestBuiltins: the options `mcp serve` runs with come from the config:
// the built-ins in work_dir (the shell only with allow_shell) and the
// permission rules' verdict on every call.
func TestBuiltins(t *testing.T) {
	dir := t.TempDir()
	cfg := &config.Config{WorkDir: dir, Permissions: config.Permissions{Deny: []string{"write_file"}, Ask: []string{"edit_file", "search"}}}
	for _, denyAsk := range []bool{false, true} {
		opts, err := Builtins(cfg, denyAsk)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := opts.Tools.Get("execute_command"); ok {
			t.Error("execute_command served with allow_shell off")
		}
		if _, ok := opts.Tools.Get("read_file"); !ok {
			t.Error("read_file not served")
		}
		ctx := context.Background()
		for tool, want := range map[string]struct {
			ok  bool
			why string
		}{
			"read_file":  {true, ""},
			"write_file": {false, "the [permissions] rules deny write_file"},
			"edit_file":  {!denyAsk, map[bool]string{true: "the [permissions] rules ask about edit_file and --deny-ask refuses it"}[denyAsk]},
		} {
			ok, why := opts.Permit(ctx, tool, nil)
			if ok != want.ok || why != want.why {
				t.Errorf("denyAsk %v: %s -> %v %q, want %v %q", denyAsk, tool, ok, why, want.ok, want.why)
			}
		}
	}
	cfg.AllowShell = true
	opts, err := Builtins(cfg, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := opts.Tools.Get("execute_command"); !ok {
		t.Error("execute_command not served with allow_shell on")
	}
	if _, err := Builtins(&config.Config{WorkDir: dir + "/none"}, false); err == nil {
		t.Error("a missing work_dir served")
	}
}

// TestRulesPermitKinds: with no rule naming a tool, its kind (from the
// registry) decides: read-only kinds run, others are asked about (refused
// with denyAsk); a tool the registry does not know is of kind other.
func TestRulesPermitKinds(t *testing.T) {
	reg, err := tools.Builtins(tools.Options{WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	permit := RulesPermit(permission.Rules{}, reg, true)
	for tool, want := range map[string]bool{"read_file": true, "search": true, "edit_file": false, "web_fetch": false, "unknown_tool": false} {
		if ok, _ := permit(context.Background(), tool, nil); ok != want {
			t.Errorf("%s: allowed %v, want %v", tool, ok, want)
		}
	}
	if ok, _ := RulesPermit(permission.Rules{}, reg, false)(context.Background(), "unknown_tool", nil); !ok {
		t.Error("without denyAsk an asked-about tool runs (the host asks its user)")
	}
}
