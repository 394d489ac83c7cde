package config

import (
	"strings"
	"testing"
)

func TestMCPServerDefaults(t *testing.T) {
	if DefaultStartupTimeoutSecs != 60 || DefaultToolTimeoutSecs != 600 {
		t.Fatalf("defaults: startup %d, tool %d; docs and template say 60 and 600", DefaultStartupTimeoutSecs, DefaultToolTimeoutSecs)
	}
	c := loadString(t, "[mcp_servers.a]\ncommand = \"x\"\n[mcp_servers.b]\nurl = \"https://h/mcp\"\n")
	for _, name := range []string{"a", "b"} {
		if s := c.MCPServers[name]; s.StartupTimeoutSecs != 60 || s.ToolTimeoutSecs != 600 {
			t.Errorf("%s: startup %d, tool %d, want 60 and 600", name, s.StartupTimeoutSecs, s.ToolTimeoutSecs)
		}
	}
}

func TestMCPServerValidation(t *testing.T) {
	const clearText = "headers would be sent in clear text over http:// to a non-loopback host; use https://"
	tests := []struct {
		name, toml, wantErr string // wantErr "" means valid
	}{
		{"https with headers", "[mcp_servers.w]\nurl = \"https://mcp.example.com/mcp\"\nheaders = { Authorization = \"Bearer t\" }", ""},
		{"http remote without headers", "[mcp_servers.w]\nurl = \"http://mcp.example.com/mcp\"", ""},
		{"http remote with empty headers", "[mcp_servers.w]\nurl = \"http://mcp.example.com/mcp\"\nheaders = {}", ""},
		{"http localhost", "[mcp_servers.w]\nurl = \"http://localhost:8080/mcp\"\nheaders = { A = \"b\" }", ""},
		{"http LOCALHOST", "[mcp_servers.w]\nurl = \"http://LocalHost/mcp\"\nheaders = { A = \"b\" }", ""},
		{"http 127.0.0.1", "[mcp_servers.w]\nurl = \"http://127.0.0.1:3000\"\nheaders = { A = \"b\" }", ""},
		{"http 127.8.9.10", "[mcp_servers.w]\nurl = \"http://127.8.9.10/\"\nheaders = { A = \"b\" }", ""},
		{"http ::1", "[mcp_servers.w]\nurl = \"http://[::1]:3000/mcp\"\nheaders = { A = \"b\" }", ""},
		{"http remote", "[mcp_servers.w]\nurl = \"http://mcp.example.com/mcp\"\nheaders = { A = \"b\" }",
			"config: mcp_servers.w.headers: " + clearText},
		{"HTTP remote", "[mcp_servers.w]\nurl = \"HTTP://mcp.example.com/mcp\"\nheaders = { A = \"b\" }",
			"config: mcp_servers.w.headers: " + clearText},
		{"http private address", "[mcp_servers.w]\nurl = \"http://10.0.0.1/mcp\"\nheaders = { A = \"b\" }",
			"config: mcp_servers.w.headers: " + clearText},
		{"http localhost lookalike", "[mcp_servers.w]\nurl = \"http://localhost.example.com/mcp\"\nheaders = { A = \"b\" }",
			"config: mcp_servers.w.headers: " + clearText},
		{"http 128.0.0.1", "[mcp_servers.w]\nurl = \"http://128.0.0.1/\"\nheaders = { A = \"b\" }",
			"config: mcp_servers.w.headers: " + clearText},
		{"http remote quoted name", "[mcp_servers.\"my w\"]\nurl = \"http://h.example/\"\n[mcp_servers.\"my w\".headers]\nA = \"b\"",
			`config: mcp_servers."my w".headers: ` + clearText},

		{"valid globs", "[mcp_servers.g]\ncommand = \"x\"\nenabled_tools = [\"read_*\", \"{a,b}?\", \"**\", \"exact\"]\ndisabled_tools = [\"[ab]*\"]", ""},
		{"enabled_tools bad", "[mcp_servers.g]\ncommand = \"x\"\nenabled_tools = [\"read_[\"]",
			`config: mcp_servers.g.enabled_tools: entry 1 "read_[" is not a valid glob pattern`},
		{"disabled_tools bad", "[mcp_servers.g]\ncommand = \"x\"\ndisabled_tools = [\"ok\", \"{a,b\"]",
			`config: mcp_servers.g.disabled_tools: entry 2 "{a,b" is not a valid glob pattern`},
		{"enabled_tools empty entry", "[mcp_servers.g]\ncommand = \"x\"\nenabled_tools = [\"\"]",
			`config: mcp_servers.g.enabled_tools: entry 1 is empty`},
		{"glob error quoted name", "[mcp_servers.\"a.b\"]\ncommand = \"x\"\ndisabled_tools = [\"[\"]",
			`config: mcp_servers."a.b".disabled_tools: entry 1 "[" is not a valid glob pattern`},

		{"neither command nor url", "[mcp_servers.gh]\nenv = { A = \"b\" }",
			"config: mcp_servers.gh: set command (stdio server) or url (HTTP server)"},
		{"both command and url", "[mcp_servers.gh]\ncommand = \"x\"\nurl = \"https://h\"",
			"config: mcp_servers.gh: set only one of command (stdio server) or url (HTTP server), not both"},
		{"both, quoted name", "[mcp_servers.\"g h\"]\ncommand = \"x\"\nurl = \"https://h\"",
			`config: mcp_servers."g h": set only one of command`},
		{"empty name", "[mcp_servers.\"\"]\ncommand = \"x\"", `config: mcp_servers."": an MCP server needs a non-empty name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadWith(writeConfig(t, tt.toml), nil)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.wantErr)):
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// Servers given by an ACP client go through the same checks.
func TestCheckMCPServerClearTextHeaders(t *testing.T) {
	s := &MCPServer{URL: "http://mcp.example.com/", Headers: map[string]string{"A": "b"}}
	if err := CheckMCPServer("acp", s); err == nil || !strings.Contains(err.Error(), "mcp_servers.acp.headers: headers would be sent in clear text") {
		t.Errorf("err = %v", err)
	}
	s = &MCPServer{Command: "x", EnabledTools: []string{"a["}}
	if err := CheckMCPServer("acp", s); err == nil || !strings.Contains(err.Error(), `mcp_servers.acp.enabled_tools: entry 1 "a["`) {
		t.Errorf("err = %v", err)
	}
}
