package config

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestPublicLeaks fills every secret-bearing field with a unique marker and
// checks that none survives into the JSON clients receive.
func TestPublicLeaks(t *testing.T) {
	var markers []string
	mark := func(where string) string {
		m := fmt.Sprintf("SECRET%02dX%s", len(markers), where)
		markers = append(markers, m)
		return m
	}
	c := loadString(t, fmt.Sprintf(`
default_provider = "openai"
[providers.openai]
default_model = "m"
api_key = %q
api_base = "https://%s:%s@api.example.com/v1?key=%s&x=%s#%s"
[providers.local]
api_base = "http://%s@localhost:11434/v1?%s"
default_model = "m"
api_key = %q
headers = { Authorization = %q }
[mcp_servers.stdio]
command = "npx"
args = ["--token", %q, "--url=https://x/?k=%s"]
env = { GITHUB_TOKEN = %q, OTHER = %q }
[mcp_servers.http]
url = "https://%s:%s@mcp.example.com/mcp?token=%s#%s"
headers = { Authorization = %q, "X-Api-Key" = %q }
`,
		mark("apikey"),
		mark("user"), mark("pass"), mark("query"), mark("query2"), mark("fragment"),
		mark("userOnly"), mark("bareQuery"),
		mark("apikey2"), mark("providerheader"),
		mark("arg"), mark("argurl"),
		mark("env"), mark("env2"),
		mark("mcpuser"), mark("mcppass"), mark("mcpquery"), mark("mcpfrag"),
		mark("header"), mark("header2"),
	))
	b, err := json.Marshal(c.Public())
	if err != nil {
		t.Fatal(err)
	}
	// Markers are alphanumeric, so HTML escaping by json.Marshal cannot hide
	// a leak; the readable form below is only for the shape checks.
	out := string(b)
	for _, m := range markers {
		if strings.Contains(out, m) {
			t.Errorf("public config leaks %s:\n%s", m, out)
		}
	}
	if strings.Contains(out, "SECRET") {
		t.Errorf("public config leaks a marker:\n%s", out)
	}
	out = marshalPlain(t, c.Public())
	for _, want := range []string{
		`"api_base":"https://api.example.com/v1"`,
		`"api_base":"http://localhost:11434/v1"`,
		`"url":"https://mcp.example.com/mcp"`,
		`"env":{"GITHUB_TOKEN":"<redacted>","OTHER":"<redacted>"}`,
		`"headers":{"Authorization":"<redacted>","X-Api-Key":"<redacted>"}`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("public config lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "api_key") || strings.Contains(out, `"args"`) {
		t.Errorf("public config has api_key or args fields:\n%s", out)
	}
}

func TestPublicShape(t *testing.T) {
	c := loadString(t, `
default_provider = "openai"
[providers.openai]
default_model = "gpt-4"
models = ["gpt-4", "gpt-4-turbo"]
max_tokens = 4096
context_window = 128000
[providers.ollama]
api_base = "http://localhost:11434/v1"
default_model = "llama"
[mcp_servers.github]
command = "npx"
env = { GITHUB_TOKEN = "t" }
[memory]
embedding_provider = "openai"
embedding_model = "text-embedding-3-small"
`)
	c.WorkDir = "/home/user/project" // fixed so the expected JSON is stable
	b := marshalPlain(t, c.Public())
	want := `{"default_provider":"openai","max_iterations":10,"work_dir":"/home/user/project","allow_shell":false,"tui":{},` +
		`"providers":{` +
		`"ollama":{"kind":"openai_compatible","api_base":"http://localhost:11434/v1","default_model":"llama","models":[],"timeout_secs":120},` +
		`"openai":{"kind":"openai","api_base":"https://api.openai.com/v1","default_model":"gpt-4","models":["gpt-4","gpt-4-turbo"],` +
		`"env_var":"OPENAI_API_KEY","timeout_secs":120,"max_tokens":4096,"context_window":128000}},` +
		`"mcp_servers":{"github":{"command":"npx","env":{"GITHUB_TOKEN":"<redacted>"},"headers":{},"tool_timeout_secs":600}},` +
		`"memory":{"embedding_provider":"openai","embedding_model":"text-embedding-3-small","top_k":5}}`
	if b != want {
		t.Errorf("Public JSON:\n got %s\nwant %s", b, want)
	}

	// A config with nothing configured still has objects, not nulls.
	b = marshalPlain(t, (&Config{}).Public())
	if !strings.Contains(b, `"providers":{}`) || !strings.Contains(b, `"mcp_servers":{}`) ||
		strings.Contains(b, "memory") {
		t.Errorf("empty Public JSON: %s", b)
	}
}

func TestRedactURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"https://api.openai.com/v1", "https://api.openai.com/v1"},
		{"https://u:p@h.example/v1?key=k#f", "https://h.example/v1"},
		{"http://u@h:8080/x?", "http://h:8080/x"},
		{"https://h/#access_token=t", "https://h/"},
		{"//u:p@h/x?k", "//h/x"},
		{"h/x?key=s", "h/x"},
		{"user:pass@host", Redacted},
		{"localhost:11434", Redacted},
		{"http://h/%zz", Redacted},
		{"http://[::1", Redacted},
	}
	for _, tt := range tests {
		if got := redactURL(tt.in); got != tt.want {
			t.Errorf("redactURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// marshalPlain encodes without HTML escaping, as "<redacted>" reads in seed 000.
func marshalPlain(t *testing.T, v any) string {
	t.Helper()
	var buf strings.Builder
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}
