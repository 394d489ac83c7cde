package config

import (
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/bmatcuk/doublestar/v4"
)

var defaultAPIBase = map[string]string{
	KindOpenAI:          "https://api.openai.com/v1",
	KindOpenAIResponses: "https://api.openai.com/v1",
	KindAnthropic:       "https://api.anthropic.com/v1",
	KindGemini:          "https://generativelanguage.googleapis.com/v1beta",
}

var defaultEnvVar = map[string]string{
	KindOpenAI:          "OPENAI_API_KEY",
	KindOpenAIResponses: "OPENAI_API_KEY",
	KindAnthropic:       "ANTHROPIC_API_KEY",
	KindGemini:          "GEMINI_API_KEY",
}

var kinds = []string{KindOpenAI, KindAnthropic, KindGemini, KindOpenAICompatible, KindOpenAIResponses, KindReplay}

// kindFromName keeps the Rust behaviour where the table name alone chose the
// client: [providers.anthropic] needs no kind line, anything unknown is
// assumed to speak the OpenAI API (Ollama, vLLM, Together, ...).
func kindFromName(name string) string {
	switch name {
	case KindOpenAI, KindAnthropic, KindGemini:
		return name
	}
	return KindOpenAICompatible
}

// normalize fills a provider's defaults and checks it. isSet reports whether
// a key was written in the file, to tell "absent" from an explicit zero.
func (p *Provider) normalize(name, dir string, isSet func(...string) bool) error {
	key := func(k string) string { return toml.Key{"providers", name, k}.String() }
	if name == "" {
		return keyErr(`providers.""`, "a provider needs a non-empty name")
	}
	p.Name = name

	if p.Kind == "" {
		p.Kind = kindFromName(name)
	}
	if !slices.Contains(kinds, p.Kind) {
		return keyErr(key("kind"), "unknown kind %q (want one of %s)", p.Kind, strings.Join(kinds, ", "))
	}

	if p.Kind == KindReplay {
		if p.Cassette == "" {
			return keyErr(key("cassette"), `required for kind "replay"`)
		}
		p.Cassette = resolveAgainst(dir, p.Cassette)
	} else if p.Cassette != "" {
		return keyErr(key("cassette"), `only valid for kind "replay" (this provider is %q)`, p.Kind)
	}

	if p.APIBase == "" {
		p.APIBase = defaultAPIBase[p.Kind]
	}
	switch {
	case p.APIBase == "" && p.Kind == KindOpenAICompatible:
		return keyErr(key("api_base"), "required for kind openai_compatible (e.g. http://localhost:11434/v1)")
	case p.APIBase != "" && !isHTTPURL(p.APIBase):
		return keyErr(key("api_base"), "must be an http:// or https:// URL (got %q)", redactURL(p.APIBase))
	}
	// Clients append paths such as /chat/completions; a trailing slash
	// would double it.
	p.APIBase = strings.TrimRight(p.APIBase, "/")

	for i, m := range p.Models {
		if strings.TrimSpace(m) == "" {
			return keyErr(key("models"), "entry %d is empty", i+1)
		}
	}
	if p.DefaultModel == "" {
		switch {
		case len(p.Models) > 0:
			p.DefaultModel = p.Models[0]
		case p.Kind == KindReplay:
			p.DefaultModel = "replay"
		default:
			return keyErr(key("default_model"), "required when models is empty")
		}
	}
	if len(p.Models) > 0 && !slices.Contains(p.Models, p.DefaultModel) {
		// Resolve rejects models outside the list; a default outside it
		// would make every plain run fail.
		return keyErr(key("default_model"), "%q is not in models (%s)", p.DefaultModel, strings.Join(p.Models, ", "))
	}

	// An explicit env_var = "" opts out of the kind's variable.
	if !isSet("providers", name, "env_var") {
		p.EnvVar = defaultEnvVar[p.Kind]
	}

	if !isSet("providers", name, "timeout_secs") {
		p.TimeoutSecs = DefaultTimeoutSecs
	} else if p.TimeoutSecs <= 0 {
		return keyErr(key("timeout_secs"), "must be greater than 0")
	}
	if p.MaxTokens < 0 {
		return keyErr(key("max_tokens"), "must not be negative (0 means the provider's default)")
	}
	if p.ContextWindow < 0 {
		return keyErr(key("context_window"), "must not be negative (0 means unknown)")
	}
	return p.normalizeThinking(key)
}

// normalizeThinking checks the thinking keys. Every value an older config
// held ("adaptive", "off") keeps loading.
func (p *Provider) normalizeThinking(key func(string) string) error {
	switch p.Thinking {
	case "", "adaptive", "budget", "off":
	default:
		return keyErr(key("thinking"), `must be "adaptive", "budget" or "off" (got %q)`, p.Thinking)
	}
	switch {
	case p.ThinkingBudget < 0:
		return keyErr(key("thinking_budget"), "must not be negative (0 means the provider's default)")
	case p.Kind == KindAnthropic && p.ThinkingBudget > 0 && p.ThinkingBudget < 1024:
		return keyErr(key("thinking_budget"), "must be at least 1024 for kind anthropic, the API's minimum (got %d)", p.ThinkingBudget)
	case p.ThinkingBudget > 0 && p.MaxTokens > 0 && p.ThinkingBudget >= p.MaxTokens && p.Kind == KindAnthropic:
		return keyErr(key("thinking_budget"), "must be below max_tokens (%d): the budget is part of the answer's tokens", p.MaxTokens)
	}
	return nil
}

// normalize fills an MCP server's defaults and checks it. Keys that only make
// sense for the other transport are errors rather than silently ignored,
// because a header meant for authentication that is dropped looks like a bug
// in the server.
func (s *MCPServer) normalize(name, dir string, isSet func(...string) bool) error {
	server := toml.Key{"mcp_servers", name}.String()
	key := func(k string) string { return toml.Key{"mcp_servers", name, k}.String() }
	if name == "" {
		return keyErr(server, "an MCP server needs a non-empty name")
	}

	switch {
	case s.Command == "" && s.URL == "":
		return keyErr(server, "set command (stdio server) or url (HTTP server)")
	case s.Command != "" && s.URL != "":
		return keyErr(server, "set only one of command (stdio server) or url (HTTP server), not both")
	case s.URL != "":
		if !isHTTPURL(s.URL) {
			return keyErr(key("url"), "must be an http:// or https:// URL (got %q)", redactURL(s.URL))
		}
		for _, f := range []struct {
			name string
			set  bool
		}{{"args", len(s.Args) > 0}, {"env", len(s.Env) > 0}, {"cwd", s.Cwd != ""}} {
			if f.set {
				return keyErr(key(f.name), "only valid with command, but this server uses url")
			}
		}
		if len(s.Headers) > 0 && clearTextToRemote(s.URL) {
			// Headers carry tokens; on the loopback interface nobody can
			// listen in, anywhere else anyone on the path can.
			return keyErr(key("headers"), "headers would be sent in clear text over http:// to a non-loopback host; use https://")
		}
	default:
		if len(s.Headers) > 0 {
			return keyErr(key("headers"), "only valid with url, but this server uses command")
		}
	}
	if s.Cwd != "" {
		s.Cwd = resolveAgainst(dir, s.Cwd)
	}

	// A typo in a pattern would otherwise silently enable or hide tools.
	for _, l := range []struct {
		name     string
		patterns []string
	}{{"enabled_tools", s.EnabledTools}, {"disabled_tools", s.DisabledTools}} {
		for i, p := range l.patterns {
			if p == "" {
				return keyErr(key(l.name), "entry %d is empty; want a glob over the server's tool names such as \"read_*\"", i+1)
			}
			if !doublestar.ValidatePattern(p) {
				return keyErr(key(l.name), "entry %d %q is not a valid glob pattern", i+1, p)
			}
		}
	}

	if !isSet("mcp_servers", name, "tool_timeout_secs") {
		s.ToolTimeoutSecs = DefaultToolTimeoutSecs
	} else if s.ToolTimeoutSecs <= 0 {
		return keyErr(key("tool_timeout_secs"), "must be greater than 0")
	}
	if !isSet("mcp_servers", name, "startup_timeout_secs") {
		s.StartupTimeoutSecs = DefaultStartupTimeoutSecs
	} else if s.StartupTimeoutSecs <= 0 {
		return keyErr(key("startup_timeout_secs"), "must be greater than 0")
	}
	return nil
}

func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// clearTextToRemote reports whether u is a plain http:// URL to a host other
// than the loopback interface (localhost, 127.0.0.0/8, ::1).
func clearTextToRemote(u string) bool {
	p, err := url.Parse(u)
	if err != nil || p.Scheme != "http" {
		return false
	}
	host := strings.TrimSuffix(p.Hostname(), ".")
	if strings.EqualFold(host, "localhost") {
		return false
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback()
}

// isOrigin accepts what browsers send in the Origin header: scheme and host,
// nothing after.
func isOrigin(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.Scheme != "" && u.Host != "" && u.User == nil &&
		(u.Path == "" || u.Path == "/") && u.RawQuery == "" && u.Fragment == ""
}

// resolveAgainst makes paths written in the config file relative to that
// file, so a config keeps working whatever directory openheim starts in.
func resolveAgainst(dir, p string) string {
	p = expandTilde(p)
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}
