// Package redacttest plants a distinct secret in every secret-bearing field
// of a config, for tests that drive an output channel into failures that
// quote them and check that none comes out. Every planted secret contains
// "PLANT"; nothing else in the config does.
package redacttest

import (
	"fmt"
	"strings"
)

// The planted secrets, one per field.
const (
	APIKey       = "PLANT-apikey-11aa2b"            // providers.fake.api_key
	Header       = "PLANT-header-22bb3c"            // providers.fake.headers
	BaseUser     = "PLANT-user-33cc4d"              // providers.fake.api_base userinfo
	BasePass     = "PLANT-pass-44dd5e"              // providers.fake.api_base userinfo
	BaseQuery    = "PLANT-query-55ee6f"             // providers.fake.api_base ?token=
	EnvKey       = "PLANT-envvar-66ff7a"            // $EnvVar: providers.emb (the embedding provider)
	ArgFlag      = "PLANT-argflag-77aa1b"           // mcp_servers.quoting.args --token=
	ArgNext      = "PLANT-argnext-88bb2c"           // mcp_servers.quoting.args --api-key X
	ArgBare      = "PLANT-argbare-9f8e7d6c5b4a3f2e" // mcp_servers.quoting.args, by look
	MCPEnv       = "PLANT-mcpenv-99cc3d"            // mcp_servers.quoting.env API_TOKEN
	MCPEnvLook   = "PLANT-mcpenvlook-1a2b3c4d5e6f"  // mcp_servers.quoting.env OPAQUE, by look
	MCPUser      = "PLANT-mcpuser-aa11bc"           // mcp_servers.remote.url userinfo
	MCPPass      = "PLANT-mcppass-bb22cd"           // mcp_servers.remote.url userinfo
	MCPQuery     = "PLANT-mcpquery-cc33de"          // mcp_servers.remote.url ?access_token=
	MCPHeader    = "PLANT-mcpheader-dd44ef"         // mcp_servers.remote.headers
	ACPEnv       = "PLANT-acpenv-ee55fa"            // acp_agents.helper.env
	ACPArg       = "PLANT-acparg-ff66ab"            // acp_agents.helper.args
	EnvVar       = "OPENHEIM_REDACTTEST_EMB_KEY"    // the variable EnvKey is read from
	FailingMCP   = "quoting"                        // the stdio server that fails quoting them
	UnreachedMCP = "remote"                         // the HTTP server that cannot be reached
)

// Secrets lists every planted secret.
func Secrets() []string {
	return []string{APIKey, Header, BaseUser, BasePass, BaseQuery, EnvKey, ArgFlag, ArgNext, ArgBare,
		MCPEnv, MCPEnvLook, MCPUser, MCPPass, MCPQuery, MCPHeader, ACPEnv, ACPArg}
}

// Known is a text quoting every planted secret, for a fake server's error
// body or a model's answer.
func Known() string { return "known: " + strings.Join(Secrets(), " ") }

// Leaks returns the planted secrets (or fragments: anything with PLANT)
// found in text.
func Leaks(text string) []string {
	var out []string
	for _, s := range Secrets() {
		if strings.Contains(text, s) {
			out = append(out, s)
		}
	}
	if len(out) == 0 && strings.Contains(text, "PLANT") {
		out = append(out, "PLANT (a fragment)")
	}
	return out
}

// Config is a config.toml with work_dir work and every secret planted:
// provider "fake" (the default) on llmURL (an http:// base such as
// llmtest.Server.URL()) with a key, a header and userinfo and a query in
// its api_base; provider "emb", the embedding provider, whose key is read
// from $EnvVar (set it to EnvKey); MCP server "quoting", a stdio command
// that prints its args, its env and Known() to stderr and exits 3; MCP
// server "remote", an https:// URL nobody listens on, with credentials,
// a query and a header; ACP agent "helper" with a secret env and arg.
func Config(work, llmURL string) string {
	base := strings.Replace(llmURL, "http://", "http://"+BaseUser+":"+BasePass+"@", 1) + "?token=" + BaseQuery + "&api-version=2024-06-01"
	script := `echo "starting $0 $*" >&2; echo "fatal: refusing $* with $API_TOKEN $OPAQUE; ` + Known() + `" >&2; exit 3`
	return fmt.Sprintf(`default_provider = "fake"
work_dir = %q

[providers.fake]
api_base = %q
api_key = %q
default_model = "m1"
models = ["m1", "m2"]
headers = { X-Gateway-Token = %q }

[providers.emb]
kind = "openai_compatible"
api_base = %q
env_var = %q
default_model = "embed-model"

[memory]
embedding_provider = "emb"
embedding_model = "embed-model"

[mcp_servers.quoting]
command = "sh"
args = ["-c", %q, "failing-mcp", "--token=%s", "--api-key", %q, %q, "--verbose"]
env = { API_TOKEN = %q, OPAQUE = %q }
startup_timeout_secs = 10

[mcp_servers.remote]
url = "https://%s:%s@127.0.0.1:1/mcp?access_token=%s"
headers = { Authorization = "Bearer %s" }
startup_timeout_secs = 10

[acp_agents.helper]
command = "/bin/true"
args = ["--token", %q]
env = { HELPER_TOKEN = %q }
`, work, base, APIKey, Header, llmURL, EnvVar, script, ArgFlag, ArgNext, ArgBare, MCPEnv, MCPEnvLook,
		MCPUser, MCPPass, MCPQuery, MCPHeader, ACPArg, ACPEnv)
}
