package config

import (
	"maps"
	"slices"

	"github.com/openheim/openheim/runtime/redact"
)

// Redactor masks every secret value of the config (see Secrets) in text
// that leaves the process. It is nil, and free to apply, for a config
// without secrets. Build it once per run: it reads the environment for the
// providers' env_var keys.
func (c *Config) Redactor() *redact.Redactor { return redact.New(c.Secrets()...) }

// Secrets lists the config's secret values, the ones no output may show:
//   - providers: the API key (api_key, or the value of env_var), every
//     header value, and api_base's userinfo and secret query values (the
//     embedding provider is one of these);
//   - MCP servers: header values, the secret env values and args, and the
//     url's userinfo and secret query values;
//   - ACP agents: the secret env values and args.
//
// Which env values, args and query values are secret is decided by
// runtime/redact (by name: TOKEN, --api-key, ?token=; or by look: a long run
// mixing letters and digits); values under redact.MinLen are left out.
func (c *Config) Secrets() []string {
	var out []string
	for _, name := range sortedKeys(c.Providers) {
		if p := c.Providers[name]; p != nil {
			out = append(out, p.secrets(c.apiKey(p))...)
		}
	}
	for _, name := range sortedKeys(c.MCPServers) {
		if s := c.MCPServers[name]; s != nil {
			out = append(out, s.Secrets()...)
		}
	}
	for _, name := range sortedKeys(c.ACPAgents) {
		if a := c.ACPAgents[name]; a != nil {
			out = append(out, redact.EnvSecrets(a.Env)...)
			out = append(out, redact.ArgSecrets(slices.Concat(a.Args, a.ExtraArgs))...)
		}
	}
	return append(out, c.clusterSecrets()...)
}

func (p *Provider) secrets(key string) []string {
	out := []string{key, p.APIKey}
	out = append(out, headerSecrets(p.Headers)...)
	return append(out, redact.URLSecrets(p.APIBase)...)
}

// Secrets lists the server's secret values (see Config.Secrets); the MCP
// client also uses it for servers that are not in the config (an ACP
// client's session/new mcpServers).
func (s *MCPServer) Secrets() []string {
	out := headerSecrets(s.Headers)
	out = append(out, redact.EnvSecrets(s.Env)...)
	out = append(out, redact.ArgSecrets(s.Args)...)
	return append(out, redact.URLSecrets(s.URL)...)
}

// HoldsSecret reports whether writing s into a file puts a credential
// there: any header or env value (a setting such as LOG=1 cannot be told
// from a short password, and the cost of guessing wrong is only a stricter
// mode), a secret-looking arg, or a URL with userinfo or a secret query.
func (s *MCPServer) HoldsSecret() bool {
	return len(s.Headers) > 0 || len(s.Env) > 0 || len(redact.ArgSecrets(s.Args)) > 0 || len(redact.URLSecrets(s.URL)) > 0
}

func headerSecrets(h map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(h)) {
		out = append(out, redact.HeaderSecrets(h[k])...)
	}
	return out
}
