package config

import "net/url"

// Redacted replaces every secret value in the public view.
const Redacted = "<redacted>"

// PublicConfig is the body of GET /api/config (seed 000 AppConfig): the
// config as a client may see it. It is built field by field, never by
// copying Config, so a secret-bearing field added to Config later stays out
// until someone decides it is safe.
type PublicConfig struct {
	DefaultProvider string                     `json:"default_provider"`
	MaxIterations   int                        `json:"max_iterations"`
	WorkDir         string                     `json:"work_dir"`
	AllowShell      bool                       `json:"allow_shell"`
	TUI             PublicTUI                  `json:"tui"`
	Providers       map[string]PublicProvider  `json:"providers"`
	MCPServers      map[string]PublicMCPServer `json:"mcp_servers"`
	Memory          *PublicMemory              `json:"memory,omitempty"`
}

// PublicTUI is the tui section of PublicConfig.
type PublicTUI struct {
	ThemeColor string `json:"theme_color,omitempty"`
}

// PublicProvider is seed 000's ProviderConfig: no api_key, and api_base
// without credentials, query or fragment.
type PublicProvider struct {
	Kind          string   `json:"kind"`
	APIBase       string   `json:"api_base"`
	DefaultModel  string   `json:"default_model"`
	Models        []string `json:"models"`
	EnvVar        string   `json:"env_var,omitempty"`
	TimeoutSecs   int      `json:"timeout_secs,omitempty"`
	MaxTokens     int      `json:"max_tokens,omitempty"`
	ContextWindow int      `json:"context_window,omitempty"`
}

// PublicMCPServer is seed 000's McpServerConfig: args are omitted because
// tokens are routinely passed on command lines; env and header values are
// replaced by Redacted so clients still see which keys are set.
type PublicMCPServer struct {
	Command         string            `json:"command,omitempty"`
	URL             string            `json:"url,omitempty"`
	Env             map[string]string `json:"env"`
	Headers         map[string]string `json:"headers"`
	ToolTimeoutSecs int               `json:"tool_timeout_secs,omitempty"`
}

// PublicMemory is the memory section of PublicConfig.
type PublicMemory struct {
	EmbeddingProvider string `json:"embedding_provider,omitempty"`
	EmbeddingModel    string `json:"embedding_model,omitempty"`
	TopK              int    `json:"top_k"`
}

// Public returns the redacted view of the config for clients.
func (c *Config) Public() PublicConfig {
	pc := PublicConfig{
		DefaultProvider: c.DefaultProvider,
		MaxIterations:   c.MaxIterations,
		WorkDir:         c.WorkDir,
		AllowShell:      c.AllowShell,
		TUI:             PublicTUI{ThemeColor: c.TUI.ThemeColor},
		Providers:       make(map[string]PublicProvider, len(c.Providers)),
		MCPServers:      make(map[string]PublicMCPServer, len(c.MCPServers)),
	}
	for name, p := range c.Providers {
		if p == nil {
			continue
		}
		pc.Providers[name] = PublicProvider{
			Kind:          p.Kind,
			APIBase:       redactURL(p.APIBase),
			DefaultModel:  p.DefaultModel,
			Models:        nonNil(p.Models),
			EnvVar:        p.EnvVar,
			TimeoutSecs:   p.TimeoutSecs,
			MaxTokens:     p.MaxTokens,
			ContextWindow: p.ContextWindow,
		}
	}
	for name, s := range c.MCPServers {
		if s == nil {
			continue
		}
		pc.MCPServers[name] = PublicMCPServer{
			Command:         s.Command,
			URL:             redactURL(s.URL),
			Env:             redactValues(s.Env),
			Headers:         redactValues(s.Headers),
			ToolTimeoutSecs: s.ToolTimeoutSecs,
		}
	}
	if m := c.Memory; m != (Memory{}) {
		pc.Memory = &PublicMemory{EmbeddingProvider: m.EmbeddingProvider, EmbeddingModel: m.EmbeddingModel, TopK: m.TopK}
	}
	return pc
}

func redactValues(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k := range m {
		out[k] = Redacted
	}
	return out
}

// redactURL drops userinfo, query and fragment, the places URLs carry
// credentials (https://user:key@host, ?key=..., #access_token=...). Anything
// that does not parse as a hierarchical URL is hidden whole, because we
// cannot tell which part of it is secret.
func redactURL(s string) string {
	if s == "" {
		return ""
	}
	u, err := url.Parse(s)
	if err != nil || u.Opaque != "" {
		return Redacted
	}
	u.User = nil
	u.RawQuery = ""
	u.ForceQuery = false
	u.Fragment = ""
	u.RawFragment = ""
	return u.String()
}
