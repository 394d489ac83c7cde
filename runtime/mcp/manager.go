// Package mcp is the MCP client manager: it connects to the configured MCP
// servers (stdio commands in their own process groups, or streamable HTTP),
// offers their tools to the agent as tools.Tool under "{server}__{tool}"
// names, calls them with per-call timeouts, and reconnects servers whose
// connection broke.
//
// Rules a caller can rely on:
//   - Start connects every server concurrently and never blocks; a server
//     that fails gets Status.Error and Options.Warn, and the others go on.
//   - A call on a server whose connection is known to be gone reconnects
//     first. A call during which the connection breaks fails (it may have
//     run) and the next call reconnects. After a failed connection attempt
//     no other is made for Options.Backoff (30 s); calls in that window fail
//     at once, saying when the next attempt will be made.
//   - Close cancels calls in flight, closes every session and kills every
//     stdio server's process group; it is idempotent.
package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/redact"
	"github.com/openheim/openheim/runtime/tools"
)

// DefaultBackoff is how long a server that failed to connect is left alone.
const DefaultBackoff = 30 * time.Second

// Status is seed 000's McpServerStatus; every key always present. It is
// the event stream's type, so a turn reports a failed server as it is.
type Status = event.MCPServerStatus

// Options configures a Manager.
type Options struct {
	Log     *slog.Logger // server stderr lines and warnings go here (default slog.Default())
	Version string       // client implementation version
	// Warn is called once per failed connection attempt (prompt prints a
	// line), before Wait returns; when nil the failure is logged at warn
	// level instead. It must not call back into the Manager.
	Warn func(server string, err error)
	// Backoff is how long no new connection attempt is made after a failed
	// one (default DefaultBackoff).
	Backoff time.Duration
	// Redact masks the config's secrets (config.Config.Redactor) in every
	// status error, warning and relayed stderr line; each server's own
	// secrets (config.MCPServer.Secrets) are masked even when it is nil.
	Redact *redact.Redactor
}

// Manager holds the connections to the configured MCP servers.
type Manager struct {
	opts    Options
	backoff time.Duration
	servers map[string]*server
	names   []string // sorted

	base      context.Context // cancelled by Close
	cancel    context.CancelFunc
	wg        sync.WaitGroup // every goroutine the manager starts
	closeOnce sync.Once

	callMu  sync.Mutex
	calls   sync.WaitGroup // tools/call requests in flight
	inCalls int
	closing bool
}

// cancelGrace is how long Close lets the SDK send notifications/cancelled
// for the calls it cut before closing the sessions (a closing session
// refuses new notifications once no call is in flight).
const cancelGrace = 50 * time.Millisecond

// callStart counts a call in, unless the manager is closing.
func (m *Manager) callStart() bool {
	m.callMu.Lock()
	defer m.callMu.Unlock()
	if m.closing {
		return false
	}
	m.calls.Add(1)
	m.inCalls++
	return true
}

func (m *Manager) callEnd() {
	m.callMu.Lock()
	m.inCalls--
	m.callMu.Unlock()
	m.calls.Done()
}

// NewManager prepares a client for every server; nothing connects before
// Start or the first use. servers come from runtime/config, normalized.
func NewManager(servers map[string]*config.MCPServer, opts Options) *Manager {
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	m := &Manager{opts: opts, backoff: opts.Backoff, servers: map[string]*server{}}
	if m.backoff <= 0 {
		m.backoff = DefaultBackoff
	}
	m.base, m.cancel = context.WithCancel(context.Background())
	for name, cfg := range servers {
		if cfg == nil {
			cfg = &config.MCPServer{}
		}
		m.servers[name] = m.newServer(name, cfg)
		m.names = append(m.names, name)
	}
	sort.Strings(m.names)
	return m
}

func (m *Manager) newServer(name string, cfg *config.MCPServer) *server {
	log := m.opts.Log.With("mcp_server", name)
	for _, p := range append(slices.Clone(cfg.EnabledTools), cfg.DisabledTools...) {
		if !doublestar.ValidatePattern(p) {
			log.Warn("mcp tool filter is not a valid glob pattern; it matches nothing", "pattern", p)
		}
	}
	s := &server{m: m, name: name, cfg: cfg, log: log, scrub: newScrubber(cfg, m.opts.Redact)}
	if cfg.URL != "" {
		s.httpc, s.httptr = newHTTPClient(cfg.Headers, max(s.toolTimeout(), s.startupTimeout())+10*time.Second)
	}
	s.client = mcp.NewClient(&mcp.Implementation{Name: "openheim", Version: m.opts.Version}, &mcp.ClientOptions{
		Logger: log,
		// No roots, sampling or elicitation are offered.
		Capabilities: &mcp.ClientCapabilities{},
		ToolListChangedHandler: func(_ context.Context, req *mcp.ToolListChangedRequest) {
			s.onToolsChanged(req.Session)
		},
	})
	return s
}

// goTracked runs fn in a goroutine Close waits for. Callers hold a server's
// mu and have checked that it is not closed.
func (m *Manager) goTracked(fn func()) {
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		fn()
	}()
}

// Start connects every server concurrently in the background and returns
// at once. Cancelling ctx abandons the attempts it started.
func (m *Manager) Start(ctx context.Context) {
	for _, name := range m.names {
		s := m.servers[name]
		s.mu.Lock()
		if !s.closed && s.sess == nil {
			s.startConnectLocked(ctx)
		}
		s.mu.Unlock()
	}
}

// Wait returns when every connection attempt in flight has succeeded or
// failed (each is bounded by its startup_timeout_secs), or when ctx ends.
func (m *Manager) Wait(ctx context.Context) {
	for _, name := range m.names {
		s := m.servers[name]
		s.mu.Lock()
		ch := s.connecting
		s.mu.Unlock()
		if ch == nil {
			continue
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return
		}
	}
}

// Status reports every server, sorted by name. ToolCount counts the tools
// Tools offers for the server: its last listing, kept while it reconnects.
func (m *Manager) Status() []Status {
	out := make([]Status, 0, len(m.names))
	for _, name := range m.names {
		s := m.servers[name]
		st := Status{Name: name, Transport: s.transportName()}
		switch st.Transport {
		case "stdio":
			st.Command = &s.cfg.Command
		case "http":
			u := redactURL(s.cfg.URL)
			st.URL = &u
		}
		s.mu.Lock()
		st.Connected = s.sess != nil
		if s.listed {
			st.ToolCount = len(s.tools)
		}
		if !st.Connected && s.err != nil {
			msg := s.scrub.Replace(s.err.Error())
			st.Error = &msg
		}
		s.mu.Unlock()
		out = append(out, st)
	}
	return out
}

// Tools returns adapters for the tools of every server that has listed its
// tools (a server whose connection broke keeps them: calling one
// reconnects). Names are "{server}__{tool}" made provider-safe; a name
// that two tools would share goes to the one whose name needed no
// cleaning, else to the first by (server, tool), and the other gets a hash
// suffix. The result is sorted by server, then tool.
func (m *Manager) Tools() []tools.Tool {
	type entry struct {
		s *server
		t *mcp.Tool
	}
	var all []entry
	for _, name := range m.names {
		s := m.servers[name]
		s.mu.Lock()
		if s.listed && !s.closed {
			ts := slices.Clone(s.tools)
			sort.SliceStable(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
			for _, t := range ts {
				all = append(all, entry{s, t})
			}
		}
		s.mu.Unlock()
	}
	names := make([]string, len(all))
	used := map[string]bool{}
	for pass := range 2 { // exact names first, then cleaned ones
		for i, e := range all {
			full := e.s.name + "__" + e.t.Name
			name := toolName(e.s.name, e.t.Name)
			if (name == full) != (pass == 0) {
				continue
			}
			if used[name] {
				name = withHash(cleanName(full), full)
			}
			for n := 1; used[name]; n++ {
				name = withHash(cleanName(full), fmt.Sprintf("%s#%d", full, n))
			}
			used[name], names[i] = true, name
		}
	}
	out := make([]tools.Tool, len(all))
	for i, e := range all {
		out[i] = newTool(e.s, e.t, names[i])
	}
	return out
}

// ServerTools returns the server's tools after the filters, connecting
// first if it is not connected.
func (m *Manager) ServerTools(ctx context.Context, server string) ([]*mcp.Tool, error) {
	s, ok := m.servers[server]
	if !ok {
		return nil, fmt.Errorf("unknown MCP server %q", server)
	}
	if _, err := s.session(ctx); err != nil {
		return nil, fmt.Errorf("MCP server %q is unavailable: %w", server, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.tools), nil
}

// Call calls a tool by its name on the server (`openheim mcp call`). The
// result is always usable as a tool result. err is non-nil when the server
// gave no answer: unknown server, disabled tool, arguments that are not an
// object, connection failure, timeout, cancellation; the result then holds
// the same message with IsError set. A tool that fails, or a protocol error
// (such as an unknown tool), is a result with IsError and a nil err.
func (m *Manager) Call(ctx context.Context, server, tool string, args json.RawMessage) (tools.Result, error) {
	s, ok := m.servers[server]
	if !ok {
		return fail(fmt.Errorf("unknown MCP server %q", server))
	}
	return s.call(ctx, tool, args)
}

// Close cancels calls in flight, disconnects every server, kills every
// stdio server's process group and waits for the manager's goroutines. It
// is idempotent and returns nil: a server that does not exit gracefully is
// killed, which is not an error.
func (m *Manager) Close() error {
	m.closeOnce.Do(func() {
		var open []*session
		for _, s := range m.servers {
			s.mu.Lock()
			s.closed = true
			if s.sess != nil {
				open = append(open, s.sess)
				s.sess = nil
			}
			s.mu.Unlock()
		}
		m.callMu.Lock()
		m.closing = true
		cut := m.inCalls > 0
		m.callMu.Unlock()
		m.cancel() // calls in flight end, so the graceful closes do not wait for them
		m.calls.Wait()
		if cut {
			time.Sleep(cancelGrace)
		}
		var wg sync.WaitGroup
		for _, sess := range open {
			wg.Go(func() { _ = sess.cs.Close() })
		}
		wg.Wait()
		m.wg.Wait()
		for _, s := range m.servers {
			if s.httptr != nil {
				s.httptr.CloseIdleConnections()
			}
		}
	})
	return nil
}
