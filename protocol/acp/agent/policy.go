package agent

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
)

// SessionPolicy bounds what a client may ask for when it opens a session
// (session/new, session/load, session/resume): the directory the session's
// tools run in and MCP servers of the client's own, whose commands would
// run on this machine. `openheim serve` sets one on its /ws and /acp
// agents, whose clients are whoever holds the token; stdio leaves it nil,
// since an editor that starts `openheim acp` is its user.
type SessionPolicy struct {
	// Roots are the directories a session's cwd must be or lie inside,
	// compared after symlinks are resolved.
	Roots []string
	// ClientMCPServers accepts a request's mcpServers; otherwise a request
	// that names any is refused.
	ClientMCPServers bool
}

// check returns a -32602 error when cwd or servers are not allowed; a nil
// policy allows everything.
func (p *SessionPolicy) check(cwd string, servers []json.RawMessage) error {
	if p == nil {
		return nil
	}
	if len(servers) > 0 && !p.ClientMCPServers {
		return invalidParams("mcpServers: this server does not start MCP servers named by its clients " +
			"(their commands would run on the server's machine); configure them under [mcp_servers], " +
			"or set allow_client_mcp_servers = true under [serve] in the config")
	}
	if !filepath.IsAbs(cwd) {
		return invalidParams(fmt.Sprintf("cwd %q is not an absolute path", cwd))
	}
	real, err := filepath.EvalSymlinks(cwd)
	if err != nil {
		return invalidParams(fmt.Sprintf("cwd %q is not a directory", cwd))
	}
	for _, root := range p.Roots {
		if r, err := filepath.EvalSymlinks(root); err == nil && within(r, real) {
			return nil
		}
	}
	return invalidParams(fmt.Sprintf("cwd %q is outside the directories this server opens sessions in (%s); "+
		"add it to roots under [serve] in the config to allow it", cwd, strings.Join(p.Roots, ", ")))
}

// within reports whether path is root or below it; both are clean and
// absolute.
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
