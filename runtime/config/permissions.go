package config

import (
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Permissions is the [permissions] table: glob patterns (doublestar syntax)
// over tool names saying which calls run without asking, which are refused
// and which are asked about, and over absolute paths outside work_dir that
// an external agent's calls may touch (allow_outside). The
// runtime/permission package applies them; its Rules type converts from
// this one (permission.Rules(c.Permissions)), so the fields match.
type Permissions struct {
	Allow        []string `toml:"allow"`
	Deny         []string `toml:"deny"`
	Ask          []string `toml:"ask"`
	AllowOutside []string `toml:"allow_outside"`
}

// validatePermissions rejects empty and malformed patterns now: a typo in a
// deny rule would otherwise silently let the tool through.
func (c *Config) validatePermissions() error {
	for _, l := range []struct {
		key      string
		patterns []string
	}{
		{"permissions.allow", c.Permissions.Allow},
		{"permissions.deny", c.Permissions.Deny},
		{"permissions.ask", c.Permissions.Ask},
		{"permissions.allow_outside", c.Permissions.AllowOutside},
	} {
		for i, p := range l.patterns {
			if p == "" {
				return keyErr(l.key, "entry %d is empty; want a glob over tool names such as \"read_*\"", i+1)
			}
			if !doublestar.ValidatePattern(p) {
				return keyErr(l.key, "entry %d %q is not a valid glob pattern (see docs/configuration.md, Permissions)", i+1, p)
			}
		}
	}
	for i, p := range c.Permissions.AllowOutside {
		if !strings.HasPrefix(p, "/") {
			return keyErr("permissions.allow_outside", "entry %d %q is not absolute; want a path pattern such as \"/tmp/**\"", i+1, p)
		}
	}
	return nil
}
