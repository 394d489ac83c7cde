package commands

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openheim/openheim/runtime/session"
)

func TestFactoryConfigOnceAndRedacted(t *testing.T) {
	e := newTestEnv(t, fakeConfig+`api_key = "sk-test-0123456789abcdef"
surprise = 1
`)
	cfg, err := e.f.Config()
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(e.cfgPath, []byte("this is = not toml ["), 0o600)
	again, err := e.f.Config()
	if err != nil || again != cfg {
		t.Errorf("the config was loaded twice (%v)", err)
	}
	if n := strings.Count(e.errOut.String(), `unknown key "providers.fake.surprise"`); n != 1 {
		t.Errorf("unknown-key warning printed %d times: %q", n, e.errOut)
	}
	// From here on stderr masks the config's secrets; stdout (protocols)
	// is left alone.
	fmt.Fprintln(e.f.IOStreams.ErrOut, "failed with sk-test-0123456789abcdef")
	fmt.Fprintln(e.f.IOStreams.Out, "sk-test-0123456789abcdef")
	if strings.Contains(e.errOut.String(), "sk-test-0123456789abcdef") {
		t.Errorf("stderr shows the key: %q", e.errOut)
	}
	if e.out.String() != "sk-test-0123456789abcdef\n" || e.f.IOStreams.Redactor() == nil {
		t.Errorf("stdout %q, redactor %v", e.out, e.f.IOStreams.Redactor())
	}
}

func TestFactoryConfigErrors(t *testing.T) {
	e := newTestEnv(t, "this is = not toml [")
	_, err := e.f.Config()
	wantExit(t, err, ExitUsage, e.cfgPath)
	if ee := err.(*ExitError); ee.Hint != "check the file, or run 'openheim init' to write a commented one" {
		t.Errorf("hint %q", ee.Hint)
	}
	f := NewFactory(e.f.IOStreams, "test")
	f.ConfigPath = func() string { return filepath.Join(e.home, "missing.toml") }
	_, err = f.Config()
	wantExit(t, err, ExitUsage, "missing.toml")
	_, err = f.Memory()
	wantExit(t, err, ExitUsage, "missing.toml")
}

// TestRootConfigFlag: --config on the root command reaches the factory.
func TestRootConfigFlag(t *testing.T) {
	e := newTestEnv(t, `default_skills = ["x"]`+"\n"+fakeConfig)
	f := NewFactory(e.f.IOStreams, "test")
	f.Home = e.f.Home
	root := newRoot(f)
	if err := root.Run(context.Background(), []string{"openheim", "--config", e.cfgPath, "skills", "--json"}); err != nil {
		t.Fatal(err)
	}
	cfg, _ := f.Config()
	if cfg.Path() != e.cfgPath || len(cfg.DefaultSkills) != 1 {
		t.Errorf("config loaded from %q", cfg.Path())
	}
	err := newRoot(NewFactory(e.f.IOStreams, "test")).Run(context.Background(), []string{"openheim", "sessions", "lss"})
	if CodeOf(err) == ExitOK {
		t.Errorf("an unknown sub-verb succeeded")
	}
	err = newRoot(NewFactory(e.f.IOStreams, "test")).Run(context.Background(), []string{"openheim", "nonsense"})
	wantExit(t, err, ExitUsage, `unknown command "nonsense"`)
}

func TestFactorySessions(t *testing.T) {
	e := newTestEnv(t, fakeConfig)
	s := e.sessions()
	if s.Dir != filepath.Join(e.home, "history") || s.Catalog.IndexDir != filepath.Join(e.home, "index", "sessions") ||
		s.Locker.(*session.Locker).Dir != s.Dir || s.Catalog.Progress != nil || s.Backend.Name() != "files" {
		t.Errorf("sessions: %+v %+v %+v", s.Files, s.Catalog, s.Locker)
	}
	s.Catalog.Warn("index is odd")
	if e.errOut.String() != "openheim: warning: index is odd\n" {
		t.Errorf("warning: %q", e.errOut)
	}
	e.f.IOStreams.ErrTTY = true
	if e.sessions().Catalog.Progress == nil {
		t.Error("no progress bar on a terminal")
	}
	e.f.Home = func() string { return "/dev/null/none" }
	if _, err := e.f.Sessions(); CodeOf(err) != ExitFailure {
		t.Errorf("unusable data directory: %v", err)
	}
}

func TestFactoryRuntime(t *testing.T) {
	e := mcpEnv(t)
	cfg, err := e.f.Config()
	if err != nil {
		t.Fatal(err)
	}
	s := e.sessions()
	rt, release := e.f.Runtime(context.Background(), cfg, s, true)
	eng := rt.Engine
	if rt.Servers == nil || eng.MCP == nil || eng.Store != s.Store || eng.Locker != s.Locker || eng.Memory == nil || eng.ExternalAgent == nil {
		t.Fatalf("runtime with MCP: %+v", rt)
	}
	rt.Servers.Wait(context.Background())
	reg, err := eng.Tools(cfg.WorkDir, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := reg.Get("files__read_file"); !ok {
		t.Error("the MCP servers' tools are not the engine's")
	}
	if !strings.Contains(e.errOut.String(), "openheim: warning: MCP server broken: ") {
		t.Errorf("the failed server is not reported: %q", e.errOut)
	}
	release()
	if _, err := os.Stat(filepath.Join(e.home, "memory")); err == nil {
		t.Error("memory opened though no turn used it")
	}

	rt, release = e.f.Runtime(context.Background(), cfg, s, false)
	defer release()
	if rt.Servers != nil || rt.Engine.MCP != nil {
		t.Errorf("withMCP false still connects: %+v", rt)
	}
	m, err := rt.Engine.Memory.Open()
	if err != nil || m == nil {
		t.Fatalf("memory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(e.home, "memory")); err != nil {
		t.Errorf("the memory is not in the data directory: %v", err)
	}
}

func TestFactoryMCP(t *testing.T) {
	e := mcpEnv(t)
	cfg, _ := e.f.Config()
	m, err := e.f.MCP(context.Background(), cfg, "files")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if st := m.Status(); len(st) != 1 || !st[0].Connected {
		t.Errorf("only files, connected: %+v", st)
	}
	if e.errOut.String() != "" {
		t.Errorf("connecting for a command warns on its own: %q", e.errOut)
	}
}
