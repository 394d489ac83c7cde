//go:build unix

package mcpserver

// Tests against real MCP peers from npm (testdata/mcp at the repo root,
// installed by .ci/run): the inspector CLI over stdio and Streamable HTTP,
// and the conformance suite's server scenarios over HTTP.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/tools"
)

// stdioEnv, when set to a directory, turns this test binary into an MCP
// server on stdio serving the built-ins in that directory: the inspector
// spawns it as its server, no separate build needed.
const stdioEnv = "OPENHEIM_MCPSERVER_TEST_STDIO"

func TestMain(m *testing.M) {
	if dir := os.Getenv(stdioEnv); dir != "" {
		os.Exit(serveStdioForTest(dir))
	}
	os.Exit(m.Run())
}

func serveStdioForTest(dir string) int {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	reg, err := tools.Builtins(tools.Options{WorkDir: dir})
	if err != nil {
		log.Error("registry", "err", err)
		return 1
	}
	if err := ServeStdio(context.Background(), Options{Tools: reg, Version: "test", Log: log}, os.Stdin, os.Stdout); err != nil {
		log.Error("serve", "err", err)
		return 1
	}
	return 0
}

// nodeModules returns the npm peers' node_modules, skipping the test when
// they are not installed (failing under CI, where .ci/run installs them).
func nodeModules(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "testdata", "mcp", "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".bin", "node")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("npm test peers missing (%v): .ci/run installs them with npm ci in testdata/mcp", err)
		}
		t.Skipf("npm test peers not installed (%v); run `npm ci` in testdata/mcp", err)
	}
	return dir
}

// runPeer runs a peer's command from node_modules/.bin with that folder
// first on PATH (Node 22 for the conformance suite), in its own process
// group killed on timeout, and returns its stdout.
func runPeer(t *testing.T, nm, dir string, timeout time.Duration, env []string, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	bin := filepath.Join(nm, ".bin")
	cmd := exec.CommandContext(ctx, filepath.Join(bin, name), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "NO_COLOR=1")
	cmd.Env = append(cmd.Env, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	t.Logf("%s %s: %v in %v", name, strings.Join(args, " "), err, time.Since(start).Round(time.Millisecond))
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("timed out after %v: %w", timeout, err)
		}
		return stdout.String(), fmt.Errorf("%w\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	return stdout.String(), nil
}

// inspectorDir is a working directory for the inspector CLI: it reads
// ../package.json from its cwd for its client name and version.
func inspectorDir(t *testing.T) string {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "package.json"), []byte(`{"name":"@openheim/test","version":"0.0.0"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "run")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func workDir(t *testing.T) string {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello from openheim\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestInspectorCLI(t *testing.T) {
	nm := nodeModules(t)
	t.Parallel()
	dir := workDir(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	reg, err := tools.Builtins(tools.Options{WorkDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	targets := map[string]struct {
		target []string
		env    []string
	}{
		"stdio": {[]string{self}, []string{stdioEnv + "=" + dir}},
		"http":  {[]string{httpServer(t, Options{Tools: reg, Version: "test"})}, nil},
	}
	for name, tc := range targets {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cwd := inspectorDir(t)
			out, err := runPeer(t, nm, cwd, time.Minute, tc.env, "mcp-inspector-cli",
				append(append([]string{"--cli"}, tc.target...), "--method", "tools/list")...)
			if err != nil {
				t.Fatal(err)
			}
			var list struct {
				Tools []struct {
					Name        string         `json:"name"`
					InputSchema map[string]any `json:"inputSchema"`
				} `json:"tools"`
			}
			if err := json.Unmarshal([]byte(out), &list); err != nil {
				t.Fatalf("tools/list output: %v\n%s", err, out)
			}
			var got []string
			for _, tl := range list.Tools {
				got = append(got, tl.Name)
				if tl.InputSchema["type"] != "object" {
					t.Errorf("%s: inputSchema %v", tl.Name, tl.InputSchema)
				}
			}
			if want := "edit_file list_dir read_file search web_fetch write_file"; strings.Join(got, " ") != want {
				t.Errorf("tools = %v, want %s", got, want)
			}

			out, err = runPeer(t, nm, cwd, time.Minute, tc.env, "mcp-inspector-cli",
				append(append([]string{"--cli"}, tc.target...),
					"--method", "tools/call", "--tool-name", "list_dir", "--tool-arg", "path=.")...)
			if err != nil {
				t.Fatal(err)
			}
			var res struct {
				Content []struct{ Type, Text string } `json:"content"`
				IsError bool                          `json:"isError"`
			}
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("tools/call output: %v\n%s", err, out)
			}
			if res.IsError || len(res.Content) != 1 || !strings.Contains(res.Content[0].Text, "hello.txt") ||
				!strings.Contains(res.Content[0].Text, "sub/") {
				t.Errorf("list_dir result:\n%s", out)
			}
		})
	}
}

func TestConformanceSuite(t *testing.T) {
	nm := nodeModules(t)
	if testing.Short() {
		t.Skip("the conformance suite takes a while; skipped with -short")
	}
	t.Parallel()
	reg, err := tools.Builtins(tools.Options{WorkDir: workDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	url := httpServer(t, Options{Tools: reg, Version: "test"})
	expected, err := filepath.Abs(filepath.Join("testdata", "conformance-expected-failures.yml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	results := filepath.Join(dir, "results")
	start := time.Now()
	out, err := runPeer(t, nm, dir, 3*time.Minute, nil, "conformance", "server", "--url", url,
		"--expected-failures", expected, "-o", results)
	if err != nil {
		t.Fatalf("%v\nchecks that did not pass:\n%s", err, unsuccessful(t, results))
	}
	t.Logf("conformance suite ran in %v", time.Since(start).Round(time.Millisecond))
	// Guard against a suite that silently runs nothing: the scenarios
	// openheim must pass are reported as passed.
	for _, s := range []string{"server-initialize", "logging-set-level", "ping", "tools-list",
		"resources-list", "prompts-list", "server-sse-multiple-streams", "dns-rebinding-protection"} {
		if !strings.Contains(out, "✓ "+s+":") {
			t.Errorf("scenario %s not reported as passed:\n%s", s, out)
		}
	}
}

// unsuccessful lists the checks of a conformance run that did not succeed.
func unsuccessful(t *testing.T, results string) string {
	files, _ := filepath.Glob(filepath.Join(results, "*", "checks.json"))
	var b strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Log(err)
			continue
		}
		var checks []struct{ ID, Status, ErrorMessage string }
		if err := json.Unmarshal(data, &checks); err != nil {
			t.Logf("%s: %v", f, err)
			continue
		}
		for _, c := range checks {
			if c.Status != "SUCCESS" {
				fmt.Fprintf(&b, "  %s: %s %s\n", c.ID, c.Status, c.ErrorMessage)
			}
		}
	}
	return b.String()
}
