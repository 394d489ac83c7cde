// Package config loads, validates and resolves openheim's configuration: the
// config.toml under the data directory, the providers and models it offers,
// and the redacted view that the HTTP API and clients are allowed to see.
//
// It has no terminal and no HTTP knowledge; flags are applied by callers on
// the plain fields after Load (SetWorkDir exists because work_dir needs the
// same validation as the file).
package config

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Provider kinds. The kind picks the wire protocol; the provider's name is
// only a label, so two OpenAI-compatible servers can coexist.
const (
	KindOpenAI           = "openai"
	KindAnthropic        = "anthropic"
	KindGemini           = "gemini"
	KindOpenAICompatible = "openai_compatible"
	// KindOpenAIResponses is the OpenAI Responses API (POST /responses),
	// what Codex and OpenAI's reasoning models use.
	KindOpenAIResponses = "openai_responses"
	KindReplay          = "replay"
)

// Defaults shared by Load, the docs and the init template; keep them in sync.
const (
	DefaultMaxIterations      = 10
	DefaultTopK               = 5
	MaxTopK                   = 20
	DefaultTimeoutSecs        = 120
	DefaultToolTimeoutSecs    = 600
	DefaultStartupTimeoutSecs = 60
)

// Config is the whole of config.toml after defaults and validation.
type Config struct {
	DefaultProvider string `toml:"default_provider"`
	MaxIterations   int    `toml:"max_iterations"`
	WorkDir         string `toml:"work_dir"`
	AllowShell      bool   `toml:"allow_shell"`
	// DefaultSkills are active in every new session that names none
	// (skills/<name>.md next to system.md).
	DefaultSkills []string              `toml:"default_skills"`
	TUI           TUI                   `toml:"tui"`
	Providers     map[string]*Provider  `toml:"providers"`
	MCPServers    map[string]*MCPServer `toml:"mcp_servers"`
	// ACPAgents are external ACP agents openheim can drive
	// (`prompt --agent NAME`), beside the presets.
	ACPAgents   map[string]*ACPAgent `toml:"acp_agents"`
	Memory      Memory               `toml:"memory"`
	Serve       Serve                `toml:"serve"`
	Cluster     Cluster              `toml:"cluster"`
	Permissions Permissions          `toml:"permissions"`
	// DataDir is where sessions, memory, indexes and serve's token go
	// (relative to this file); see DataHome.
	DataDir string `toml:"data_dir"`
	// RecordDir, when set, makes every `openheim prompt` record its model
	// replies into a replay cassette there (like --record FILE).
	RecordDir string `toml:"record_dir"`
	// MaxAnswerBytes and MaxRetryWaitSecs are the providers' limits
	// (limits.go); a provider's own keys win.
	MaxAnswerBytes   int `toml:"max_answer_bytes"`
	MaxRetryWaitSecs int `toml:"max_retry_wait_secs"`
	// Prices are what models cost, by "provider/model" (prices.go): the
	// sessions API's total_cost_usd.
	Prices map[string]*Price `toml:"prices"`

	// Getenv looks up API keys in Resolve; nil means os.Getenv. It is a
	// field so tests (here and in other packages) need not mutate the
	// process environment.
	Getenv func(string) string `toml:"-"`

	path string
	dir  string
}

// TUI holds settings of the interactive chat.
type TUI struct {
	ThemeColor string `toml:"theme_color"`
}

// Memory configures long-term notes; without an embedding provider search is
// keyword-only.
type Memory struct {
	EmbeddingProvider string `toml:"embedding_provider"`
	EmbeddingModel    string `toml:"embedding_model"`
	TopK              int    `toml:"top_k"`
}

// Serve configures `openheim serve`.
type Serve struct {
	AllowedOrigins []string `toml:"allowed_origins"`
	// Roots are directories besides work_dir in which /ws and /acp clients
	// may open sessions (absolute once loaded).
	Roots []string `toml:"roots"`
	// AllowClientMCPServers lets /ws and /acp clients start MCP servers of
	// their own (session/new's mcpServers): commands run on this machine.
	AllowClientMCPServers bool `toml:"allow_client_mcp_servers"`
}

// Provider is one [providers.<name>] table.
type Provider struct {
	Name          string   `toml:"-"`
	Kind          string   `toml:"kind"`
	APIBase       string   `toml:"api_base"`
	DefaultModel  string   `toml:"default_model"`
	Models        []string `toml:"models"`
	EnvVar        string   `toml:"env_var"`
	APIKey        string   `toml:"api_key"`
	TimeoutSecs   int      `toml:"timeout_secs"`
	MaxTokens     int      `toml:"max_tokens"`
	ContextWindow int      `toml:"context_window"`
	// Thinking is "" (the provider's default), "adaptive", "budget" or
	// "off"; ThinkingBudget the tokens of a budget; AdaptiveThinking, when
	// set, overrides the per-model table of which models take an adaptive
	// setting (docs/configuration.md, "Thinking").
	Thinking         string `toml:"thinking"`
	ThinkingBudget   int    `toml:"thinking_budget"`
	AdaptiveThinking *bool  `toml:"adaptive_thinking"`
	Cassette         string `toml:"cassette"`
	// MaxAnswerBytes and MaxRetryWaitSecs default to the top-level keys.
	MaxAnswerBytes   int `toml:"max_answer_bytes"`
	MaxRetryWaitSecs int `toml:"max_retry_wait_secs"`
	// Prices are what models cost, by "provider/model" (prices.go): the
	// sessions API's total_cost_usd.
	Prices map[string]*Price `toml:"prices"`
	// Headers are sent with every request to this provider, replacing
	// defaults of the same name (e.g. anthropic-version). Never shown by
	// the public view: gateways put tokens in them.
	Headers map[string]string `toml:"headers"`
}

// MCPServer is one [mcp_servers.<name>] table: either a command spawned over
// stdio or a URL spoken to over streamable HTTP.
type MCPServer struct {
	Command            string            `toml:"command"`
	Args               []string          `toml:"args"`
	Env                map[string]string `toml:"env"`
	Cwd                string            `toml:"cwd"`
	URL                string            `toml:"url"`
	Headers            map[string]string `toml:"headers"`
	ToolTimeoutSecs    int               `toml:"tool_timeout_secs"`
	StartupTimeoutSecs int               `toml:"startup_timeout_secs"`
	EnabledTools       []string          `toml:"enabled_tools"`
	DisabledTools      []string          `toml:"disabled_tools"`
}

// Home is the data directory: $OPENHEIM_HOME if set, else ~/.openheim.
func Home() string {
	if h := os.Getenv("OPENHEIM_HOME"); h != "" {
		h = expandTilde(h)
		// Absolute, so a later chdir (tests, subprocesses) cannot move it.
		if abs, err := filepath.Abs(h); err == nil {
			return abs
		}
		return h
	}
	home, err := os.UserHomeDir()
	if err != nil {
		// No $HOME (some containers): better a local directory than a panic.
		return ".openheim"
	}
	return filepath.Join(home, ".openheim")
}

// DefaultPath is the config file used when no --config is given.
func DefaultPath() string { return filepath.Join(Home(), "config.toml") }

// Path is the file the config was loaded from, "" when none existed.
func (c *Config) Path() string { return c.path }

// SkillsDir holds skill files, <name>.md.
func (c *Config) SkillsDir() string { return filepath.Join(c.Dir(), "skills") }

// AgentsDir holds subagent profiles, <name>.md.
func (c *Config) AgentsDir() string { return filepath.Join(c.Dir(), "agents") }

// DataHome is the data directory this config asks for: data_dir when
// set, else the directory of the file it was read from, so a run with
// --config FILE keeps to FILE's folder (hermetic). "" for a config without
// a file: the data directory is then Home(). $OPENHEIM_HOME, when set,
// wins over both (callers check it: environment before config file).
func (c *Config) DataHome() string {
	if c.DataDir != "" {
		return c.DataDir
	}
	return c.dir
}

// Dir is the directory holding system.md and the base for relative paths in
// the file: the config file's directory, or Home() when there was no file.
func (c *Config) Dir() string {
	if c.dir == "" {
		return Home()
	}
	return c.dir
}

// SetWorkDir applies a --work-dir style override with the same rules as the
// work_dir key: "~" expanded, relative to the cwd, must be a directory.
func (c *Config) SetWorkDir(dir string) error {
	abs, err := resolveWorkDir(dir)
	if err != nil {
		return err
	}
	c.WorkDir = abs
	return nil
}

func resolveWorkDir(dir string) (string, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return "", keyErr("work_dir", "cannot determine the current directory: %v", err)
	}
	if dir == "" {
		return cwd, nil
	}
	dir = expandTilde(dir)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(cwd, dir)
	}
	dir = filepath.Clean(dir)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", keyErr("work_dir", "%s does not exist", dir)
	case err != nil:
		return "", keyErr("work_dir", "%v", err)
	case !fi.IsDir():
		return "", keyErr("work_dir", "%s is not a directory", dir)
	}
	return dir, nil
}

// expandTilde expands a leading "~" or "~/" to the user's home directory;
// "~user" forms are left alone because Go cannot resolve them portably.
func expandTilde(p string) string {
	if p != "~" && !strings.HasPrefix(p, "~/") && !strings.HasPrefix(p, "~"+string(filepath.Separator)) {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return p
	}
	return filepath.Join(home, p[1:])
}

// keyErr formats the one error shape of this package, naming the key so the
// user can find the line to fix.
func keyErr(key, format string, args ...any) error {
	return fmt.Errorf("config: %s: %s", key, fmt.Sprintf(format, args...))
}

// sortedKeys gives map iteration a stable order so errors and listings are
// reproducible.
func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
