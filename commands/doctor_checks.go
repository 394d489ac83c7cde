package commands

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/openheim/openheim/protocol/acp"
	"github.com/openheim/openheim/protocol/acp/host"
	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/memory"
)

// agentProbeTimeout bounds starting one ACP agent for doctor.
const agentProbeTimeout = time.Minute

// checkProviders: each provider has its key, and (unless offline) its
// endpoint answers with it.
func checkProviders(ctx context.Context, cfg *config.Config, offline bool) []check {
	var out []check
	for _, name := range sortedNames(cfg.Providers) {
		out = append(out, checkProvider(ctx, cfg, name, offline))
	}
	return out
}

func checkProvider(ctx context.Context, cfg *config.Config, name string, offline bool) check {
	p := cfg.Providers[name]
	c := check{Check: "provider", Name: name, Default: name == cfg.DefaultProvider}
	r, err := cfg.Resolve(name, "")
	if err != nil {
		c.Status, c.Detail = checkFail, err.Error()
		return c
	}
	where := fmt.Sprintf("%s at %s, key %s", p.Kind, hostOf(p.APIBase), keyOrigin(p))
	if p.Kind == config.KindReplay {
		where = "replays " + p.Cassette
	}
	if r.APIKey == "" && p.Kind != config.KindOpenAICompatible && p.Kind != config.KindReplay {
		c.Status, c.Detail, c.Hint = checkFail, where, "set "+keyFix(name, p)
		return c
	}
	if offline && p.Kind != config.KindReplay {
		c.Status, c.Detail = checkOK, where+"; endpoint not checked (--offline)"
		return c
	}
	ids, err := engine.ProbeProvider(ctx, r)
	if err != nil {
		c.Status, c.Detail = checkFail, where+": "+err.Error()
		if t, ok := explainProvider(cfg, name, r.Model, err); ok {
			c.Detail, c.Hint = t.Msg, t.Hint
		}
		return c
	}
	c.Status, c.Detail = checkOK, where
	if p.Kind == config.KindReplay {
		return c
	}
	c.Detail += fmt.Sprintf("; answers (%s listed)", plural(len(ids), "model"))
	if len(ids) > 0 && !slices.Contains(ids, r.Model) {
		c.Status = checkWarn
		c.Hint = fmt.Sprintf("default_model %q is not among them: check its spelling", r.Model)
	}
	return c
}

// checkMCPServers connects each MCP server (over HTTP only when online)
// and counts its tools.
func checkMCPServers(ctx context.Context, cfg *config.Config, opts *DoctorOptions) []check {
	if len(cfg.MCPServers) == 0 {
		return nil
	}
	var out []check
	only := *cfg
	only.MCPServers = map[string]*config.MCPServer{}
	for name, s := range cfg.MCPServers {
		if opts.Offline && s.URL != "" {
			out = append(out, check{Check: "mcp_server", Name: name, Status: checkSkip, Detail: s.URL + ": not checked (--offline)"})
			continue
		}
		only.MCPServers[name] = s
	}
	if len(only.MCPServers) > 0 {
		m, err := opts.MCP(ctx, &only, "")
		if err != nil {
			return append(out, check{Check: "mcp_server", Status: checkFail, Detail: err.Error()})
		}
		defer m.Close()
		for _, st := range m.Status() {
			c := check{Check: "mcp_server", Name: st.Name, Status: checkOK}
			how := st.Transport
			if st.Command != nil {
				how += " " + *st.Command
			}
			if st.Connected {
				c.Detail = fmt.Sprintf("%s: connected, %s", how, plural(st.ToolCount, "tool"))
			} else {
				c.Status, c.Detail = checkFail, how+": "+deref(st.Error)
				c.Hint = fmt.Sprintf("try it alone: openheim mcp tools %s", st.Name)
			}
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b check) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// checkACPAgents starts each [acp_agents] agent and reads its initialize
// answer (the presets are left to 'openheim acp agents --probe': npx may
// download them).
func checkACPAgents(ctx context.Context, cfg *config.Config, opts *DoctorOptions) []check {
	var out []check
	for _, name := range sortedNames(cfg.ACPAgents) {
		a, err := cfg.ACPAgentNamed(name)
		c := check{Check: "acp_agent", Name: name}
		if err != nil {
			c.Status, c.Detail = checkFail, err.Error()
			out = append(out, c)
			continue
		}
		pctx, cancel := context.WithTimeout(ctx, agentProbeTimeout)
		start := time.Now()
		h, err := host.Start(pctx, host.AgentSpec{Name: name, Command: a.Command, Args: a.Args, ExtraArgs: a.ExtraArgs, Env: a.Env, Cwd: a.Cwd},
			host.Options{ClientInfo: acp.Implementation{Name: "openheim", Version: opts.Version}, WorkDir: cfg.WorkDir, Redact: cfg.Redactor()})
		cancel()
		if err != nil {
			c.Status, c.Detail = checkFail, a.Command+": "+cfg.Redactor().String(err.Error())
			c.Hint = "run it by hand to see why: " + cfg.Redactor().String(strings.Join(append([]string{a.Command}, a.Args...), " "))
			out = append(out, c)
			continue
		}
		info := h.Info()
		h.Close()
		who := a.Command
		if info.AgentInfo != nil {
			who = info.AgentInfo.Name + " " + info.AgentInfo.Version
		}
		c.Status, c.Detail = checkOK, fmt.Sprintf("%s answers initialize (%s)", who, shortDuration(time.Since(start)))
		out = append(out, c)
	}
	return out
}

// checkSessionIndex: the search index is in step with the sessions.
func checkSessionIndex(opts *DoctorOptions) check {
	c := check{Check: "sessions_index"}
	if _, err := os.Stat(filepath.Join(opts.Home(), "history")); err != nil {
		c.Status, c.Detail = checkOK, "no sessions yet"
		return c
	}
	s, err := opts.Sessions()
	if err != nil {
		c.Status, c.Detail = checkFail, err.Error()
		return c
	}
	st, err := s.Catalog.Status()
	switch {
	case err != nil:
		c.Status, c.Detail, c.Hint = checkWarn, err.Error(), "rebuild it: openheim sessions reindex"
	case st.Missing:
		c.Status, c.Detail = checkOK, "not built yet (the first listing builds it)"
	case st.Stale:
		c.Status, c.Detail = checkWarn, fmt.Sprintf("behind the store: %s indexed, %d changed since", plural(st.Sessions, "session"), st.Changed)
		c.Hint = "the next listing catches up, or: openheim sessions reindex"
	default:
		c.Status, c.Detail = checkOK, fmt.Sprintf("in step (%s)", plural(st.Sessions, "session"))
	}
	return c
}

// checkMemory: notes readable, and semantic search on when configured.
func checkMemory(cfg *config.Config, opts *DoctorOptions) check {
	c := check{Check: "memory", Status: checkOK}
	// Opened here rather than through the factory, quietly: the notice
	// about semantic search is this check's to say.
	mopts, notice := memoryOptions(cfg, &IOStreams{ErrOut: io.Discard}, opts.Home())
	search := "keyword search"
	if cfg.Memory.EmbeddingProvider != "" {
		search = "semantic search with " + cfg.Memory.EmbeddingProvider
	}
	if _, err := os.Stat(filepath.Join(opts.Home(), "memory")); err != nil {
		c.Detail = "no notes yet; " + search
	} else if m, err := memory.Open(mopts); err != nil {
		c.Status, c.Detail = checkFail, err.Error()
		return c
	} else {
		n, err := m.Len()
		m.Close()
		if err != nil {
			c.Status, c.Detail = checkFail, err.Error()
			return c
		}
		c.Detail = fmt.Sprintf("%s; %s", plural(n, "note"), search)
	}
	if notice != "" {
		c.Status, c.Detail, c.Hint = checkWarn, notice, "set the key of memory.embedding_provider, or remove embedding_provider for keyword search"
	}
	return c
}
