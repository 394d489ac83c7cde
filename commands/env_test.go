package commands

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/llm/llmtest"
	"github.com/openheim/openheim/runtime/message"
	"github.com/openheim/openheim/runtime/session"
	"github.com/urfave/cli/v3"
)

// testEnv is a hermetic openheim for one test: a data directory, a work
// directory, a config file, and a factory whose streams are buffers. No
// environment variable is read or set.
type testEnv struct {
	t       *testing.T
	f       *Factory
	home    string // the data directory
	work    string // the config's work_dir
	cfgPath string
	out     *syncBuffer
	errOut  *syncBuffer
	llm     *llmtest.Server // nil unless the config names $LLM
}

// fakeConfig is a config whose default model is the fake LLM server's.
const fakeConfig = `default_provider = "fake"
work_dir = "$WORK"
[providers.fake]
api_base = "$LLM"
default_model = "fake-model"
`

// newTestEnv writes cfg as the config file: $WORK is replaced by the work
// directory, $HOME by the data directory, and $LLM by the URL of a fake LLM
// server started for the test (scripted through env.llm).
func newTestEnv(t *testing.T, cfg string) *testEnv {
	t.Helper()
	root := t.TempDir()
	e := &testEnv{t: t, home: filepath.Join(root, "home"), work: filepath.Join(root, "work"),
		out: &syncBuffer{}, errOut: &syncBuffer{}}
	for _, d := range []string{e.home, e.work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if strings.Contains(cfg, "$LLM") {
		e.llm = llmtest.New()
		t.Cleanup(e.llm.Close)
		cfg = strings.ReplaceAll(cfg, "$LLM", e.llm.URL())
	}
	cfg = strings.NewReplacer("$WORK", e.work, "$HOME", e.home).Replace(cfg)
	e.cfgPath = filepath.Join(root, "config.toml")
	if err := os.WriteFile(e.cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	ios := &IOStreams{In: strings.NewReader(""), Out: e.out, ErrOut: e.errOut}
	e.f = NewFactory(ios, "test")
	e.f.Home = func() string { return e.home }
	e.f.ConfigPath = func() string { return e.cfgPath }
	return e
}

// stdin makes s the command's standard input.
func (e *testEnv) stdin(s string) { e.f.IOStreams.In = strings.NewReader(s) }

// sessions opens the env's sessions.
func (e *testEnv) sessions() *Sessions {
	e.t.Helper()
	s, err := e.f.Sessions()
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// addSession stores a session titled title with one user message and one
// answer, last updated at updated.
func (e *testEnv) addSession(title, user, answer string, updated time.Time) session.Meta {
	e.t.Helper()
	s := e.sessions()
	m := session.NewMeta(updated)
	m.Title, m.Model, m.Provider, m.Cwd = session.Str(title), session.Str("fake-model"), session.Str("fake"), session.Str(e.work)
	if err := s.Store.Create(m); err != nil {
		e.t.Fatal(err)
	}
	err := s.Store.Append(m.ID,
		message.Message{Role: message.RoleUser, Content: []message.Block{message.Text(user)}},
		message.Message{Role: message.RoleAssistant, Content: []message.Block{message.Text(answer)}})
	if err != nil {
		e.t.Fatal(err)
	}
	m.UpdatedAt = updated.UTC()
	if err := s.Store.SaveMeta(m); err != nil {
		e.t.Fatal(err)
	}
	return m
}

// reset empties the output buffers between steps of a test.
func (e *testEnv) reset() {
	e.out.Reset()
	e.errOut.Reset()
}

// parseCmd runs the command newCmd builds, under a root (and under parent,
// when not "") with args, and returns the options its run function would
// have been called with (nil when it was not: a usage error).
func parseCmd[O any](t *testing.T, e *testEnv, parent string, newCmd func(*Factory, func(context.Context, *O) error) *cli.Command, args ...string) (*O, error) {
	t.Helper()
	var got *O
	cmd := newCmd(e.f, func(_ context.Context, o *O) error { got = o; return nil })
	argv := []string{"openheim", "--config", e.cfgPath, cmd.Name}
	if parent != "" {
		cmd = &cli.Command{Name: parent, Commands: []*cli.Command{cmd}}
		argv = []string{"openheim", "--config", e.cfgPath, parent, argv[3]}
	}
	root := rootCommand(e.f, cmd)
	e.f.ConfigPath = func() string { return root.String("config") }
	err := root.Run(context.Background(), append(argv, args...))
	return got, err
}

// mustParse is parseCmd for arguments that must parse.
func mustParse[O any](t *testing.T, e *testEnv, parent string, newCmd func(*Factory, func(context.Context, *O) error) *cli.Command, args ...string) *O {
	t.Helper()
	opts, err := parseCmd(t, e, parent, newCmd, args...)
	if err != nil || opts == nil {
		t.Fatalf("%v: %v", args, err)
	}
	return opts
}

// exitCode is the code main would exit with for err, and its message.
func exitCode(err error) (int, string) {
	if err == nil {
		return 0, ""
	}
	var ee *ExitError
	if errors.As(err, &ee) && ee.Err != nil {
		return ee.Code, ee.Err.Error()
	}
	return CodeOf(err), err.Error()
}

// wantExit fails the test unless err maps to code with a message containing
// msg.
func wantExit(t *testing.T, err error, code int, msg string) {
	t.Helper()
	got, text := exitCode(err)
	if got != code || !strings.Contains(text, msg) {
		t.Fatalf("err = %v (exit %d), want exit %d with %q", err, got, code, msg)
	}
}

// syncBuffer is a bytes.Buffer safe to write from a command's goroutines
// while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func (b *syncBuffer) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.b.Reset()
}

// waitDone waits for a run function running in a goroutine to return nil.
func waitDone(t *testing.T, done <-chan error, what string) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: timed out", what)
	}
}

// waitFor polls cond until it holds or 10 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
