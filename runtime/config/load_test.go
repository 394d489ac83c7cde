package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

func TestLoadMissingFiles(t *testing.T) {
	home := t.TempDir()
	t.Setenv("OPENHEIM_HOME", home)

	c, err := LoadWith("", nil)
	if err != nil {
		t.Fatalf("missing default file: %v", err)
	}
	cwd, _ := os.Getwd()
	if c.Path() != "" || c.Dir() != home || c.MaxIterations != 10 || c.Memory.TopK != 5 ||
		c.WorkDir != cwd || len(c.Providers) != 0 || c.Providers == nil || c.MCPServers == nil {
		t.Errorf("defaults wrong: %+v", c)
	}

	missing := filepath.Join(home, "other.toml")
	_, err = LoadWith(missing, nil)
	if err == nil || err.Error() != "config: "+missing+" does not exist" {
		t.Errorf("explicit missing file: err = %v", err)
	}
}

func TestLoadDefaults(t *testing.T) {
	dir := t.TempDir()
	c := loadString(t, `
default_provider = "openai"
[providers.openai]
models = ["gpt-a", "gpt-b"]
[providers.anthropic]
default_model = "claude-x"
[providers.gemini]
default_model = "gem"
[providers.local]
api_base = "http://localhost:11434/v1/"
default_model = "llama"
[providers.rec]
kind = "replay"
cassette = "tapes/a.json"
[providers.abs]
kind = "replay"
cassette = "`+dir+`/b.json"
[providers.nokey]
kind = "openai"
env_var = ""
default_model = "m"
[mcp_servers.fs]
command = "npx"
cwd = "srv"
`)
	want := map[string]Provider{
		"openai":    {Name: "openai", Kind: "openai", APIBase: "https://api.openai.com/v1", DefaultModel: "gpt-a", Models: []string{"gpt-a", "gpt-b"}, EnvVar: "OPENAI_API_KEY", TimeoutSecs: 120},
		"anthropic": {Name: "anthropic", Kind: "anthropic", APIBase: "https://api.anthropic.com/v1", DefaultModel: "claude-x", EnvVar: "ANTHROPIC_API_KEY", TimeoutSecs: 120},
		"gemini":    {Name: "gemini", Kind: "gemini", APIBase: "https://generativelanguage.googleapis.com/v1beta", DefaultModel: "gem", EnvVar: "GEMINI_API_KEY", TimeoutSecs: 120},
		"local":     {Name: "local", Kind: "openai_compatible", APIBase: "http://localhost:11434/v1", DefaultModel: "llama", TimeoutSecs: 120},
		"rec":       {Name: "rec", Kind: "replay", DefaultModel: "replay", Cassette: filepath.Join(filepath.Dir(c.Path()), "tapes/a.json"), TimeoutSecs: 120},
		"abs":       {Name: "abs", Kind: "replay", DefaultModel: "replay", Cassette: filepath.Join(dir, "b.json"), TimeoutSecs: 120},
		"nokey":     {Name: "nokey", Kind: "openai", APIBase: "https://api.openai.com/v1", DefaultModel: "m", TimeoutSecs: 120},
	}
	for name, w := range want {
		w.MaxAnswerBytes, w.MaxRetryWaitSecs = DefaultMaxAnswerBytes, DefaultMaxRetryWaitSecs // inherited
		if got := c.Providers[name]; got == nil || !reflect.DeepEqual(*got, w) {
			t.Errorf("provider %s:\n got %+v\nwant %+v", name, got, w)
		}
	}
	fs := c.MCPServers["fs"]
	if fs.ToolTimeoutSecs != 600 || fs.StartupTimeoutSecs != 60 || fs.Cwd != filepath.Join(c.Dir(), "srv") {
		t.Errorf("mcp defaults: %+v", fs)
	}
	if c.Dir() != filepath.Dir(c.Path()) {
		t.Errorf("Dir() = %q, Path() = %q", c.Dir(), c.Path())
	}
}

func TestLoadValues(t *testing.T) {
	dir := t.TempDir()
	c := loadString(t, `
max_iterations = 3
work_dir = "`+dir+`"
allow_shell = true
[tui]
theme_color = "blue"
[providers.x]
api_base = "https://x.example/v1"
default_model = "m"
timeout_secs = 5
max_tokens = 100
context_window = 2000
thinking = "adaptive"
api_key = "k"
[mcp_servers.web]
url = "https://mcp.example/mcp"
headers = { Authorization = "Bearer t" }
tool_timeout_secs = 30
startup_timeout_secs = 9
enabled_tools = ["a*"]
disabled_tools = ["b"]
[memory]
embedding_provider = "x"
embedding_model = "e"
top_k = 20
[serve]
allowed_origins = ["http://localhost:5173", "*"]
roots = ["/srv/code", "sub"]
allow_client_mcp_servers = true
`)
	p := c.Providers["x"]
	if c.MaxIterations != 3 || c.WorkDir != dir || !c.AllowShell || c.TUI.ThemeColor != "blue" ||
		c.DefaultProvider != "x" || p.TimeoutSecs != 5 || p.MaxTokens != 100 || p.ContextWindow != 2000 ||
		p.Thinking != "adaptive" || p.APIKey != "k" || c.Memory.TopK != 20 || len(c.Serve.AllowedOrigins) != 2 ||
		!reflect.DeepEqual(c.Serve.Roots, []string{"/srv/code", filepath.Join(filepath.Dir(c.Path()), "sub")}) || !c.Serve.AllowClientMCPServers {
		t.Errorf("values not loaded: %+v %+v", c, p)
	}
	s := c.MCPServers["web"]
	if s.ToolTimeoutSecs != 30 || s.StartupTimeoutSecs != 9 || s.Headers["Authorization"] != "Bearer t" ||
		!reflect.DeepEqual(s.EnabledTools, []string{"a*"}) || !reflect.DeepEqual(s.DisabledTools, []string{"b"}) {
		t.Errorf("mcp values not loaded: %+v", s)
	}
}

func TestLoadDefaultProvider(t *testing.T) {
	tests := []struct {
		name, toml, want, wantErr string
	}{
		{"none configured", ``, "", ""},
		{"only one", "[providers.local]\napi_base = \"http://h\"\ndefault_model = \"m\"", "local", ""},
		{"openai among several", "[providers.openai]\ndefault_model = \"m\"\n[providers.gemini]\ndefault_model = \"g\"", "openai", ""},
		{"explicit", "default_provider = \"gemini\"\n[providers.openai]\ndefault_model = \"m\"\n[providers.gemini]\ndefault_model = \"g\"", "gemini", ""},
		{"ambiguous", "[providers.b]\napi_base = \"http://h\"\ndefault_model = \"m\"\n[providers.a]\napi_base = \"http://h\"\ndefault_model = \"m\"", "",
			"config: default_provider: not set and 2 providers are configured (a, b); set it to one of them"},
		{"unknown", "default_provider = \"x\"\n[providers.b]\napi_base = \"http://h\"\ndefault_model = \"m\"\n[providers.a]\napi_base = \"http://h\"\ndefault_model = \"m\"", "",
			`config: default_provider: "x" is not a configured provider (configured: a, b)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := LoadWith(writeConfig(t, tt.toml), nil)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.DefaultProvider != tt.want {
				t.Errorf("DefaultProvider = %q, want %q", c.DefaultProvider, tt.want)
			}
		})
	}
}

func TestLoadInvalid(t *testing.T) {
	const oa = "[providers.openai]\ndefault_model = \"m\"\n"
	tests := []struct {
		name, toml, wantErr string
	}{
		{"max_iterations zero", "max_iterations = 0", "config: max_iterations: must be at least 1 (got 0)"},
		{"work_dir missing", `work_dir = "/nope"`, "config: work_dir: /nope does not exist"},
		{"timeout zero", oa + "timeout_secs = 0", "config: providers.openai.timeout_secs: must be greater than 0"},
		{"timeout negative", oa + "timeout_secs = -1", "config: providers.openai.timeout_secs: must be greater than 0"},
		{"max_tokens negative", oa + "max_tokens = -1", "config: providers.openai.max_tokens: must not be negative"},
		{"context_window negative", oa + "context_window = -5", "config: providers.openai.context_window: must not be negative"},
		{"thinking", oa + `thinking = "max"`, `config: providers.openai.thinking: must be "adaptive", "budget" or "off" (got "max")`},
		{"kind", oa + `kind = "bard"`, `config: providers.openai.kind: unknown kind "bard"`},
		{"compatible needs api_base", "[providers.ollama]\ndefault_model = \"m\"", "config: providers.ollama.api_base: required for kind openai_compatible"},
		{"api_base scheme", oa + `api_base = "ftp://x/"`, `config: providers.openai.api_base: must be an http:// or https:// URL (got "ftp://x/")`},
		{"api_base no scheme", oa + `api_base = "localhost:11434"`, `config: providers.openai.api_base: must be an http:// or https:// URL (got "<redacted>")`},
		{"api_base error hides secrets", oa + `api_base = "ftp://u:pw@x/?k=s"`, `(got "ftp://x/")`},
		{"default_model required", "[providers.openai]\n", "config: providers.openai.default_model: required when models is empty"},
		{"default_model not in models", oa + `models = ["a", "b"]`, `config: providers.openai.default_model: "m" is not in models (a, b)`},
		{"empty model entry", "[providers.openai]\nmodels = [\"a\", \" \"]", "config: providers.openai.models: entry 2 is empty"},
		{"cassette required", "[providers.r]\nkind = \"replay\"", `config: providers.r.cassette: required for kind "replay"`},
		{"cassette wrong kind", oa + `cassette = "c.json"`, `config: providers.openai.cassette: only valid for kind "replay"`},
		{"quoted provider name", "[providers.\"my.srv\"]\ndefault_model = \"m\"", `config: providers."my.srv".api_base: required`},
		{"mcp neither", "[mcp_servers.gh]\nargs = [\"x\"]", "config: mcp_servers.gh: set command (stdio server) or url (HTTP server)"},
		{"mcp both", "[mcp_servers.gh]\ncommand = \"x\"\nurl = \"http://h\"", "config: mcp_servers.gh: set only one of command"},
		{"mcp bad url", "[mcp_servers.gh]\nurl = \"h:1\"", "config: mcp_servers.gh.url: must be an http:// or https:// URL"},
		{"mcp args with url", "[mcp_servers.gh]\nurl = \"http://h\"\nargs = [\"a\"]", "config: mcp_servers.gh.args: only valid with command"},
		{"mcp headers with command", "[mcp_servers.gh]\ncommand = \"x\"\nheaders = { A = \"b\" }", "config: mcp_servers.gh.headers: only valid with url"},
		{"mcp tool timeout", "[mcp_servers.gh]\ncommand = \"x\"\ntool_timeout_secs = 0", "config: mcp_servers.gh.tool_timeout_secs: must be greater than 0"},
		{"mcp startup timeout", "[mcp_servers.gh]\ncommand = \"x\"\nstartup_timeout_secs = -2", "config: mcp_servers.gh.startup_timeout_secs: must be greater than 0"},
		{"top_k zero", "[memory]\ntop_k = 0", "config: memory.top_k: must be between 1 and 20 (got 0)"},
		{"top_k too big", "[memory]\ntop_k = 21", "config: memory.top_k: must be between 1 and 20 (got 21)"},
		{"embedding provider unknown", oa + "[memory]\nembedding_provider = \"x\"\nembedding_model = \"e\"", `config: memory.embedding_provider: "x" is not a configured provider (configured: openai)`},
		{"embedding provider anthropic", "[providers.anthropic]\ndefault_model = \"c\"\n[memory]\nembedding_provider = \"anthropic\"\nembedding_model = \"e\"", "has no embeddings API"},
		{"embedding model missing", oa + "[memory]\nembedding_provider = \"openai\"", "config: memory.embedding_model: required when memory.embedding_provider is set"},
		{"embedding model alone", "[memory]\nembedding_model = \"e\"", "config: memory.embedding_model: set but memory.embedding_provider is not"},
		{"origin", "[serve]\nallowed_origins = [\"localhost:5173\"]", `config: serve.allowed_origins: "localhost:5173" is not an origin`},
		{"origin with path", "[serve]\nallowed_origins = [\"http://h/app\"]", `config: serve.allowed_origins: "http://h/app" is not an origin`},
		{"empty root", "[serve]\nroots = [\"/srv\", \" \"]", `config: serve.roots: entry 2 is empty`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadWith(writeConfig(t, tt.toml), nil)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestLoadTOMLErrors(t *testing.T) {
	tests := []struct {
		name, toml, want string
	}{
		{"syntax", "max_iterations = 10\nallow_shell = yes\n", ": line 2"},
		{"type", "default_provider = \"a\"\nmax_iterations = \"ten\"\n", `: line 2 (last key "max_iterations"): incompatible types`},
		{"duplicate key", "allow_shell = true\nallow_shell = false\n", ": line 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeConfig(t, tt.toml)
			_, err := LoadWith(path, nil)
			if err == nil || !strings.HasPrefix(err.Error(), "config: "+path+": line ") || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want file, line and %q", err, tt.want)
			}
		})
	}
	_, err := LoadWith(writeConfig(t, "[x\n"), nil)
	var pe toml.ParseError
	if !errors.As(err, &pe) {
		t.Errorf("syntax error does not unwrap to toml.ParseError: %T", err)
	}
}

func TestLoadWarnings(t *testing.T) {
	path := writeConfig(t, `
colour = "red"
theme_color = "green"
[providers.openai]
default_model = "m"
foo = 1
[providers."my.srv"]
api_base = "http://h"
default_model = "m"
bar = 2
[extra]
a = 1
b = 2
[memory]
db_path = "/x"
`)
	var warn strings.Builder
	c, err := LoadWith(path, &warn)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`openheim: warning: ` + path + `: unknown key "colour"`,
		`openheim: warning: ` + path + `: unknown key "providers.openai.foo"`,
		`openheim: warning: ` + path + `: unknown key "providers.\"my.srv\".bar"`,
		`openheim: warning: ` + path + `: unknown key "extra"`,
		`openheim: warning: ` + path + `: unknown key "memory.db_path"`,
	}
	got := strings.Split(strings.TrimSuffix(warn.String(), "\n"), "\n")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The legacy top-level theme_color is understood, not warned about.
	if c.TUI.ThemeColor != "green" {
		t.Errorf("legacy theme_color not applied: %q", c.TUI.ThemeColor)
	}
}

func TestLegacyThemeColorLosesToTUI(t *testing.T) {
	c := loadString(t, "theme_color = \"green\"\n[tui]\ntheme_color = \"red\"\n")
	if c.TUI.ThemeColor != "red" {
		t.Errorf("ThemeColor = %q, want red", c.TUI.ThemeColor)
	}
}

// TestLoadThinkingKeys: the thinking keys load (old configs' values too),
// and wrong values fail naming the key.
func TestLoadThinkingKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(path, []byte(`default_provider = "anthropic"
[providers.anthropic]
default_model = "claude-opus-4-6"
thinking = "budget"
thinking_budget = 4096
adaptive_thinking = false
[providers.old]
kind = "anthropic"
default_model = "claude-sonnet-4-5"
thinking = "adaptive"
[providers.responses]
kind = "openai_responses"
default_model = "gpt-5"
`), 0o600)
	c, err := LoadWith(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, old, r := c.Providers["anthropic"], c.Providers["old"], c.Providers["responses"]
	if a.Thinking != "budget" || a.ThinkingBudget != 4096 || a.AdaptiveThinking == nil || *a.AdaptiveThinking || old.Thinking != "adaptive" || old.AdaptiveThinking != nil {
		t.Errorf("anthropic %+v, old %+v", a, old)
	}
	if r.APIBase != "https://api.openai.com/v1" || r.EnvVar != "OPENAI_API_KEY" {
		t.Errorf("responses defaults: %+v", r)
	}
	const an = "[providers.anthropic]\ndefault_model = \"m\"\n"
	for _, tt := range []struct{ toml, want string }{
		{an + "thinking_budget = -1", "config: providers.anthropic.thinking_budget: must not be negative"},
		{an + "thinking_budget = 500", "config: providers.anthropic.thinking_budget: must be at least 1024 for kind anthropic"},
		{an + "max_tokens = 2000\nthinking_budget = 2000", "config: providers.anthropic.thinking_budget: must be below max_tokens (2000)"},
		{an + "adaptive_thinking = \"yes\"", "adaptive_thinking"},
	} {
		os.WriteFile(path, []byte(tt.toml), 0o600)
		if _, err := LoadWith(path, nil); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: err = %v, want %q", tt.toml, err, tt.want)
		}
	}
}
