package config

// Writing a [mcp_servers.<name>] table as TOML text, for AddMCPServer.

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// formatServer renders the table AddMCPServer appends, ending with eol.
func formatServer(name string, s MCPServer, eol string) string {
	var b strings.Builder
	kv := func(k, v string) { b.WriteString(k + " = " + v + eol) }
	b.WriteString("[" + toml.Key{"mcp_servers", name}.String() + "]" + eol)
	if s.Command != "" {
		kv("command", tomlString(s.Command))
	}
	if len(s.Args) > 0 {
		kv("args", tomlList(s.Args))
	}
	if len(s.Env) > 0 {
		kv("env", tomlInlineTable(s.Env))
	}
	if s.Cwd != "" {
		kv("cwd", tomlString(s.Cwd))
	}
	if s.URL != "" {
		kv("url", tomlString(s.URL))
	}
	if len(s.Headers) > 0 {
		kv("headers", tomlInlineTable(s.Headers))
	}
	if s.ToolTimeoutSecs != 0 {
		kv("tool_timeout_secs", strconv.Itoa(s.ToolTimeoutSecs))
	}
	if s.StartupTimeoutSecs != 0 {
		kv("startup_timeout_secs", strconv.Itoa(s.StartupTimeoutSecs))
	}
	if len(s.EnabledTools) > 0 {
		kv("enabled_tools", tomlList(s.EnabledTools))
	}
	if len(s.DisabledTools) > 0 {
		kv("disabled_tools", tomlList(s.DisabledTools))
	}
	return b.String()
}

// tomlString quotes s as a TOML basic string, with the escaping toml.Key
// uses for keys (which leaves bare-key text unquoted, hence the check).
func tomlString(s string) string {
	q := toml.Key{s}.String()
	if !strings.HasPrefix(q, `"`) {
		q = `"` + q + `"`
	}
	return q
}

func tomlList(l []string) string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = tomlString(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func tomlInlineTable(m map[string]string) string {
	kv := make([]string, 0, len(m))
	for _, k := range sortedKeys(m) {
		kv = append(kv, toml.Key{k}.String()+" = "+tomlString(m[k]))
	}
	return "{ " + strings.Join(kv, ", ") + " }"
}

// lineEnding is the file's own: CRLF when its first line ends so.
func lineEnding(data []byte) string {
	if i := bytes.IndexByte(data, '\n'); i > 0 && data[i-1] == '\r' {
		return "\r\n"
	}
	return "\n"
}
