package config

import (
	"slices"
	"strings"
	"testing"
)

func TestLoadPermissions(t *testing.T) {
	c, err := LoadWith(writeConfig(t, `
[permissions]
allow = ["read_*", "github__*"]
deny = ["github__delete_*", "write_file"]
ask = ["execute_command", "{web,http}_*", "**"]
allow_outside = ["/tmp/**"]
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	p := c.Permissions
	if !slices.Equal(p.Allow, []string{"read_*", "github__*"}) || !slices.Equal(p.Deny, []string{"github__delete_*", "write_file"}) ||
		!slices.Equal(p.Ask, []string{"execute_command", "{web,http}_*", "**"}) || !slices.Equal(p.AllowOutside, []string{"/tmp/**"}) {
		t.Errorf("permissions = %+v", p)
	}
	c, err = LoadWith(writeConfig(t, ``), nil)
	if err != nil || c.Permissions.Allow != nil || c.Permissions.Deny != nil || c.Permissions.Ask != nil {
		t.Errorf("default permissions = %+v, %v", c.Permissions, err)
	}
}

func TestLoadPermissionsInvalid(t *testing.T) {
	for _, tt := range []struct{ toml, want string }{
		{"[permissions]\ndeny = [\"ok\", \"read_[\"]", `config: permissions.deny: entry 2 "read_[" is not a valid glob pattern`},
		{"[permissions]\nallow = [\"{a,b\"]", `config: permissions.allow: entry 1 "{a,b" is not a valid glob pattern`},
		{"[permissions]\nask = [\"\"]", `config: permissions.ask: entry 1 is empty`},
		{"[permissions]\nask = \"execute_command\"", `incompatible types`},
		{"[permissions]\nallow_outside = [\"tmp/**\"]", `config: permissions.allow_outside: entry 1 "tmp/**" is not absolute`},
		{"[permissions]\nallow_outside = [\"/tmp/[\"]", `config: permissions.allow_outside: entry 1 "/tmp/[" is not a valid glob pattern`},
	} {
		_, err := LoadWith(writeConfig(t, tt.toml), nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: err = %v, want %q", tt.toml, err, tt.want)
		}
	}
}
