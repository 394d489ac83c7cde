package commands

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func doctorOpts(t *testing.T, e *testEnv, args ...string) *DoctorOptions {
	return mustParse(t, e, "", newCmdDoctor, args...)
}

// doctorChecks runs doctor --json and decodes its lines.
func doctorChecks(t *testing.T, e *testEnv, args ...string) ([]check, error) {
	t.Helper()
	e.reset()
	err := doctorRun(context.Background(), doctorOpts(t, e, append([]string{"--json"}, args...)...))
	var out []check
	for _, line := range strings.Split(strings.TrimSpace(e.out.String()), "\n") {
		var c check
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatalf("%v: %q", err, line)
		}
		out = append(out, c)
	}
	return out, err
}

func findCheck(cs []check, kind, name string) check {
	for _, c := range cs {
		if c.Check == kind && c.Name == name {
			return c
		}
	}
	return check{}
}

func TestDoctorGoodSetup(t *testing.T) {
	e := newTestEnv(t, fakeConfig)
	os.Chmod(e.home, 0o700)
	e.llm.ServeModels(http.StatusOK, "fake-model", "other")
	checks, err := doctorChecks(t, e)
	if err != nil {
		t.Fatalf("doctor failed: %v\n%s", err, e.out)
	}
	for _, c := range checks {
		if c.Status != checkOK {
			t.Errorf("%+v", c)
		}
	}
	if p := findCheck(checks, "provider", "fake"); !p.Default || !strings.Contains(p.Detail, "answers (2 models listed)") {
		t.Errorf("provider: %+v", p)
	}
	if r := e.llm.Requests(); len(r) != 1 || r[0].Method != http.MethodGet {
		t.Errorf("requests: %+v", r)
	}
	// --offline spends no request.
	if _, err := doctorChecks(t, e, "--offline"); err != nil || len(e.llm.Requests()) != 1 {
		t.Errorf("offline: %v, %d requests", err, len(e.llm.Requests()))
	}
	// The text report: one line each, and the verdict.
	e.reset()
	if err := doctorRun(context.Background(), doctorOpts(t, e)); err != nil {
		t.Fatal(err)
	}
	if out := e.out.String(); !strings.Contains(out, "✓ provider fake (default)") || !strings.HasSuffix(out, "no problems\n") {
		t.Errorf("report:\n%s", out)
	}
}

func TestDoctorBrokenSetup(t *testing.T) {
	e := newTestEnv(t, `default_provider = "fake"
work_dir = "$WORK"
[providers.fake]
kind = "openai"
api_base = "$LLM"
env_var = "OPENHEIM_TEST_DOCTOR_KEY"
default_model = "fake-model"
[providers.nokey]
kind = "anthropic"
env_var = "OPENHEIM_TEST_UNSET_KEY"
default_model = "claude"
[providers.down]
api_base = "http://127.0.0.1:1/v1"
default_model = "m"
[mcp_servers.broken]
command = "./no-such-server"
`)
	t.Setenv("OPENHEIM_TEST_DOCTOR_KEY", "sk-wrong")
	e.llm.ServeModels(http.StatusUnauthorized)
	os.WriteFile(filepath.Join(e.home, "serve_token"), []byte("t"), 0o644)
	checks, err := doctorChecks(t, e)
	wantExit(t, err, ExitFailure, "")
	for _, want := range []struct{ kind, name, status, hint string }{
		{"provider", "fake", checkFail, "refused the key: check $OPENHEIM_TEST_DOCTOR_KEY"},
		{"provider", "nokey", checkFail, "set $OPENHEIM_TEST_UNSET_KEY"},
		{"provider", "down", checkFail, "nothing answers at 127.0.0.1:1: check api_base"},
		{"mcp_server", "broken", checkFail, "openheim mcp tools broken"},
		{"data_dir", "", checkWarn, "chmod"},
	} {
		c := findCheck(checks, want.kind, want.name)
		if c.Status != want.status || !strings.Contains(c.Hint, want.hint) {
			t.Errorf("%s %s: %+v; want %s with hint %q", want.kind, want.name, c, want.status, want.hint)
		}
	}
	if strings.Contains(e.out.String(), "sk-wrong") {
		t.Error("the key leaked")
	}
	// A --config file that is not there.
	e2 := newTestEnv(t, fakeConfig)
	opts := doctorOpts(t, e2, "--json")
	e2.f.ConfigPath = func() string { return filepath.Join(e2.home, "missing.toml") }
	e2.reset()
	wantExit(t, doctorRun(context.Background(), opts), ExitFailure, "")
	if !strings.Contains(e2.out.String(), `{"check":"config","status":"fail","detail":"config: `+filepath.Join(e2.home, "missing.toml")+` does not exist"`) {
		t.Errorf("config: %s", e2.out)
	}
}
