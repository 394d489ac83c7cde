package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/mcp"
)

// acpMCPServer is one entry of session/new's mcpServers: stdio
// {name, command, args, env, cwd?}, or {type: "http"|"sse", name, url,
// headers}. Env and headers are [{name, value}] on the wire.
type acpMCPServer struct {
	Type    string            `json:"type"`
	Name    string            `json:"name"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     []acp.EnvVariable `json:"env"`
	CWD     string            `json:"cwd"`
	URL     string            `json:"url"`
	Headers []acp.HTTPHeader  `json:"headers"`
	Meta    json.RawMessage   `json:"_meta"`
}

// sessionServers turns a request's mcpServers into config entries,
// checked like the config file's; -32602 on the first bad one.
func sessionServers(raw []json.RawMessage) (map[string]*config.MCPServer, error) {
	out := map[string]*config.MCPServer{}
	for i, r := range raw {
		var s acpMCPServer
		if err := json.Unmarshal(r, &s); err != nil {
			return nil, invalidParams(fmt.Sprintf("mcpServers[%d]: %v", i, err))
		}
		if s.Name == "" {
			return nil, invalidParams(fmt.Sprintf("mcpServers[%d]: name is required", i))
		}
		if _, dup := out[s.Name]; dup {
			return nil, invalidParams(fmt.Sprintf("mcpServers[%d]: a server named %q is given twice", i, s.Name))
		}
		c := &config.MCPServer{}
		switch s.Type {
		case "", "stdio":
			c.Command, c.Args, c.Cwd = s.Command, s.Args, s.CWD
			if len(s.Env) > 0 {
				c.Env = map[string]string{}
				for _, e := range s.Env {
					c.Env[e.Name] = e.Value
				}
			}
		case "http":
			c.URL = s.URL
			if len(s.Headers) > 0 {
				c.Headers = map[string]string{}
				for _, h := range s.Headers {
					c.Headers[h.Name] = h.Value
				}
			}
		default:
			return nil, invalidParams(fmt.Sprintf("mcpServers[%d] (%s): %q servers are not supported (stdio and http are)", i, s.Name, s.Type))
		}
		if err := config.CheckMCPServer(s.Name, c); err != nil {
			return nil, invalidParams(fmt.Sprintf("mcpServers[%d]: %v", i, err))
		}
		out[s.Name] = c
	}
	return out, nil
}

// startSessionServers connects a session's own MCP servers in the
// background; nil when there are none.
func (a *Agent) startSessionServers(raw []json.RawMessage) (*mcp.Manager, error) {
	servers, err := sessionServers(raw)
	if err != nil || len(servers) == 0 {
		return nil, err
	}
	m := mcp.NewManager(servers, mcp.Options{Version: a.Version, Redact: a.Engine.Redactor(), Warn: func(name string, err error) {
		slog.Warn("acp: a session's MCP server failed", "server", name, "err", err)
	}})
	m.Start(context.Background())
	return m, nil
}

// mcpStatus is the configured servers' status for initialize's _meta.
func (a *Agent) mcpStatus() []mcp.Status {
	if a.Engine.MCP != nil {
		return a.Engine.MCP.Status()
	}
	return []mcp.Status{}
}
