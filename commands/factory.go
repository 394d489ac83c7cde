package commands

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/openheim/openheim/protocol/acp/host"
	"github.com/openheim/openheim/runtime/backend"
	"github.com/openheim/openheim/runtime/backend/jetstream"
	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/engine"
	"github.com/openheim/openheim/runtime/history"
	"github.com/openheim/openheim/runtime/mcp"
	"github.com/openheim/openheim/runtime/memory"
	"github.com/openheim/openheim/runtime/session"
)

// Factory makes what commands depend on (as gh's cmdutil.Factory does):
// each constructor copies the parts it needs into its Options, and tests
// hand a run function their own. Every field is a function, so nothing is
// loaded or opened before a command asks for it.
type Factory struct {
	IOStreams *IOStreams
	Version   string // the running binary's, reported to MCP servers and ACP agents
	// serving is set by serve before it opens the backend: the process is
	// a replica, listed in cluster status.
	serving bool

	// Home is the data directory ($OPENHEIM_HOME; else the config's
	// data_dir or, with --config FILE, FILE's folder; else ~/.openheim):
	// the sessions, the memory, serve's token and chat's input history
	// live there.
	Home func() string
	// ConfigPath is the config file named by --config, "" for the default.
	ConfigPath func() string
	// Config loads the configuration on its first call (later calls return
	// the same one) and from then on masks its secrets on stderr and in
	// the log.
	Config func() (*config.Config, error)
	// Backend opens the stores on its first call (later calls for the
	// same Home return the same): a cluster's when the config has
	// [cluster], else the files under Home. The process closes it at exit.
	Backend func() (backend.Backend, error)
	// Sessions opens the session store with its search catalog and lease
	// locker, on Backend.
	Sessions func() (*Sessions, error)
	// Runtime assembles the engine that runs turns for cfg on s; see
	// Factory.runtime. The returned func releases what it holds.
	Runtime func(ctx context.Context, cfg *config.Config, s *Sessions, withMCP bool) (*Runtime, func())
	// Memory opens the long-term memory of the loaded config.
	Memory func() (*memory.Memory, error)
	// MCP connects cfg's MCP servers (or only the one named) and waits for
	// them: connected, or failed with the reason in their status.
	MCP func(ctx context.Context, cfg *config.Config, only string) (*mcp.Manager, error)
}

// NewFactory returns the factory of a process whose streams are ios. The
// config is read from --config once the root command has parsed it.
func NewFactory(ios *IOStreams, version string) *Factory {
	f := &Factory{IOStreams: ios, Version: version, ConfigPath: func() string { return "" }}
	f.Home = f.dataHome
	var once sync.Once
	var cfg *config.Config
	var cfgErr error
	f.Config = func() (*config.Config, error) {
		once.Do(func() { cfg, cfgErr = loadConfig(f.ConfigPath(), f.IOStreams) })
		return cfg, cfgErr
	}
	var bMu sync.Mutex
	var b backend.Backend
	var bHome string
	f.Backend = func() (backend.Backend, error) {
		bMu.Lock()
		defer bMu.Unlock()
		home := f.Home()
		if b != nil && bHome == home {
			return b, nil
		}
		cfg, err := f.Config()
		if err != nil {
			return nil, err
		}
		warn := func(msg string) { fmt.Fprintf(f.IOStreams.ErrOut, "openheim: warning: %s\n", msg) }
		nb, err := openBackend(context.Background(), cfg, home, f.Version, f.serving, warn)
		if err != nil {
			return nil, err
		}
		b, bHome = nb, home
		return b, nil
	}
	f.Sessions = func() (*Sessions, error) {
		b, err := f.Backend()
		if err != nil {
			return nil, err
		}
		cfg, _ := f.Config()
		return openSessions(f.IOStreams, b, indexDir(f.Home(), cfg, "sessions"))
	}
	f.Runtime = f.runtime
	f.MCP = func(ctx context.Context, cfg *config.Config, only string) (*mcp.Manager, error) {
		return connectMCP(ctx, cfg, f.Version, only)
	}
	var noticeOnce sync.Once // the embedding notice, once per process
	f.Memory = func() (*memory.Memory, error) {
		cfg, err := f.Config()
		if err != nil {
			return nil, err
		}
		opts, notice := memoryOptions(cfg, f.IOStreams, f.Home())
		m, err := memory.Open(opts)
		if err != nil {
			return nil, failure(fmt.Errorf("memory: %w", err))
		}
		if notice != "" {
			noticeOnce.Do(func() { opts.Warn(notice) })
		}
		return m, nil
	}
	return f
}

// dataHome is the data directory: $OPENHEIM_HOME; else the config's
// data_dir, or the folder of the config file (so --config FILE writes
// nothing to ~/.openheim unless the config says so); else ~/.openheim.
func (f *Factory) dataHome() string {
	if os.Getenv("OPENHEIM_HOME") != "" {
		return config.Home()
	}
	if cfg, err := f.Config(); err == nil && cfg.DataHome() != "" {
		return cfg.DataHome()
	}
	// A config that does not load fails the command that needs it; until
	// then, a --config run still keeps to its file's folder.
	if path := f.ConfigPath(); path != "" {
		if dir, err := filepath.Abs(filepath.Dir(path)); err == nil {
			return dir
		}
		return filepath.Dir(path)
	}
	return config.Home()
}

// loadConfig loads the configuration at path ("" = the default file).
func loadConfig(path string, ios *IOStreams) (*config.Config, error) {
	cfg, err := config.LoadWith(path, ios.ErrOut)
	if err != nil {
		return nil, usageErr(err, "check the file, or run 'openheim init' to write a commented one")
	}
	// From here on, stderr and the log mask the config's secrets: every
	// error printed at exit (PrintError) included.
	ios.useRedactor(cfg.Redactor())
	return cfg, nil
}

// editedConfigPath is the config file mcp add and rm edit: --config, else
// the data directory's config.toml.
func (f *Factory) editedConfigPath() string {
	if p := f.ConfigPath(); p != "" {
		return p
	}
	return filepath.Join(f.Home(), "config.toml")
}

// Sessions is what every command working on stored sessions uses.
type Sessions struct {
	Backend backend.Backend
	Files   session.Source // the store itself
	Store   session.Store  // Files, marking changed sessions for re-indexing
	Catalog *history.Catalog
	// Locker keeps one turn per session at a time, across processes (and
	// replicas).
	Locker session.Leaser
	// Dir is the history directory of the file backend ("" in a cluster).
	Dir string
}

func openSessions(ios *IOStreams, b backend.Backend, index string) (*Sessions, error) {
	files := b.Sessions()
	cat := &history.Catalog{
		Store:    files,
		IndexDir: index,
		Warn:     func(msg string) { fmt.Fprintf(ios.ErrOut, "openheim: warning: %s\n", msg) },
	}
	if ios.ErrTTY {
		cat.Progress = progress(ios, "indexing sessions")
	}
	s := &Sessions{Backend: b, Files: files, Store: &history.Tracked{Store: files, Catalog: cat}, Catalog: cat,
		Locker: b.Leaser()}
	switch b := b.(type) {
	case *backend.FileBackend:
		s.Dir = b.FileStore().Dir
		b.Locker().Warn = cat.Warn
	case *jetstream.Backend:
		cat.CatchUp = b.CatchUp(index + ".cluster")
	}
	return s, nil
}

// Runtime is the engine a command runs turns with, and the MCP servers it
// was given (their status is shown by prompt --json, chat's /mcp).
type Runtime struct {
	Engine  *engine.Engine
	Servers *mcp.Manager // nil: none configured, or not connected (withMCP false)
}

// runtime assembles the engine for cfg on s: one turn per session at a
// time, long-term memory opened on first use, a subagent profile naming an
// ACP agent run on it, and with withMCP the config's MCP servers
// connecting in the background (the first turn waits for them). The
// returned func closes the memory, then the servers.
func (f *Factory) runtime(ctx context.Context, cfg *config.Config, s *Sessions, withMCP bool) (*Runtime, func()) {
	var servers *mcp.Manager
	if withMCP {
		servers = startMCP(ctx, cfg, f.IOStreams, f.Version)
	}
	e := &engine.Engine{Config: cfg, Store: s.Store, Locker: s.Locker}
	if servers != nil { // a nil manager must not become a non-nil ToolSource
		e.MCP = servers
	}
	e.ExternalAgent = func(name string) (engine.Runner, func()) {
		hr := &host.Runner{Engine: e, Agent: name, Version: f.Version}
		return hr, func() { hr.Close() }
	}
	opts, notice := memoryOptions(cfg, f.IOStreams, f.Home())
	e.Memory = &engine.MemoryOpener{Options: opts, Notice: notice}
	return &Runtime{Engine: e, Servers: servers}, func() {
		e.Memory.Close()
		if servers != nil {
			servers.Close()
		}
	}
}

// startMCP connects the configured MCP servers in the background; nil when
// there are none. A failed server is reported on stderr and left out.
func startMCP(ctx context.Context, cfg *config.Config, ios *IOStreams, version string) *mcp.Manager {
	if len(cfg.MCPServers) == 0 {
		return nil
	}
	m := mcp.NewManager(cfg.MCPServers, mcp.Options{Version: version, Redact: cfg.Redactor(), Warn: func(name string, err error) {
		fmt.Fprintf(ios.ErrOut, "openheim: warning: MCP server %s: %v (its tools are left out)\n", name, err)
	}})
	m.Start(ctx)
	return m
}

// memoryOptions are where the notes and their index live, and how search
// embeds (when the config says so); notice says why semantic search is
// off when the config asks for it but it cannot be had (no key): the
// caller says it once, when the memory opens.
func memoryOptions(cfg *config.Config, ios *IOStreams, home string) (opts memory.Options, notice string) {
	opts = memory.Options{
		Dir: filepath.Join(home, "memory"), IndexDir: filepath.Join(home, "index", "memory"),
		TopK: cfg.Memory.TopK, EmbeddingModel: cfg.Memory.EmbeddingModel,
		Warn: func(msg string) { fmt.Fprintf(ios.ErrOut, "openheim: warning: memory: %s\n", msg) },
	}
	if cfg.Memory.EmbeddingProvider != "" {
		// Without embeddings memory still works by keywords: say so, go on.
		if emb, err := engine.NewEmbedder(cfg); err != nil {
			notice = fmt.Sprintf("semantic search is off: %v; searches use keywords only", err)
		} else {
			opts.Embedder = emb
		}
	}
	if ios.ErrTTY {
		opts.Progress = progress(ios, "indexing memory")
	}
	return opts, notice
}
