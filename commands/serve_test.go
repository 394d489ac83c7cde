package commands

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestServeFlags(t *testing.T) {
	e := newTestEnv(t, fakeConfig)
	opts, err := parseCmd(t, e, "", newCmdServe, "--host", "::1", "--port", "0", "--insecure-no-auth")
	if err != nil || opts.Host != "::1" || opts.Port != 0 || !opts.InsecureNoAuth || opts.Token != "" || opts.Version != "test" {
		t.Errorf("%+v, %v", opts, err)
	}
	opts, _ = parseCmd(t, e, "", newCmdServe, "--token", "tok")
	if opts.Host != "127.0.0.1" || opts.Port != 1217 || opts.Token != "tok" {
		t.Errorf("defaults: %+v", opts)
	}
	_, err = parseCmd(t, e, "", newCmdServe, "x")
	wantExit(t, err, ExitUsage, `serve: unexpected argument "x"`)
}

// TestServeRun: the run function makes and keeps a token, serves the API
// with the factory's engine and sessions, and stops gracefully when its
// context ends.
func TestServeRun(t *testing.T) {
	e := newTestEnv(t, fakeConfig)
	e.addSession("stored", "q", "a", time.Now())
	opts := &ServeOptions{IO: e.f.IOStreams, Config: e.f.Config, Sessions: e.f.Sessions, Runtime: e.f.Runtime,
		Home: e.f.Home, Version: "test", Host: "127.0.0.1", Port: 0}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serveRun(ctx, opts) }()
	re := regexp.MustCompile(`openheim: web client: (http://\S+)/#token=(\S+)\n`)
	waitFor(t, "the web client line", func() bool { return re.MatchString(e.errOut.String()) })
	m := re.FindStringSubmatch(e.errOut.String())
	base, token := m[1], m[2]
	if !strings.Contains(e.errOut.String(), "openheim: listening on "+base+" (token required; new token in "+filepath.Join(e.home, "serve_token")+"); Ctrl-C stops\n") {
		t.Errorf("stderr: %s", e.errOut)
	}
	kept, err := os.ReadFile(filepath.Join(e.home, "serve_token"))
	if err != nil || strings.TrimSpace(string(kept)) != token {
		t.Errorf("token kept %q, printed %q (%v)", kept, token, err)
	}

	get := func(path, token string) (int, string) {
		req, _ := http.NewRequest("GET", base+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, _ := get("/api/sessions", ""); code != http.StatusUnauthorized {
		t.Errorf("without the token: %d", code)
	}
	if code, body := get("/api/sessions", token); code != 200 || !strings.Contains(body, `"stored"`) {
		t.Errorf("sessions: %d %s", code, body)
	}
	cancel()
	waitDone(t, done, "serve stopping")
	if !strings.HasSuffix(e.errOut.String(), "openheim: stopped\n") {
		t.Errorf("stderr: %s", e.errOut)
	}
}

func TestServeRunUsageErrors(t *testing.T) {
	e := newTestEnv(t, fakeConfig)
	opts := &ServeOptions{IO: e.f.IOStreams, Config: e.f.Config, Sessions: e.f.Sessions, Runtime: e.f.Runtime,
		Home: e.f.Home, Host: "127.0.0.1", Port: 70000}
	wantExit(t, serveRun(context.Background(), opts), ExitUsage, "serve: port 70000 is out of range")
	opts.Port, opts.InsecureNoAuth, opts.Token = 0, true, "tok"
	wantExit(t, serveRun(context.Background(), opts), ExitUsage, "serve: --insecure-no-auth with a token")
	opts.Host, opts.Token = "0.0.0.0", ""
	wantExit(t, serveRun(context.Background(), opts), ExitUsage, `serve: --insecure-no-auth is refused on "0.0.0.0"`)
	if _, err := os.Stat(filepath.Join(e.home, "serve_token")); err == nil {
		t.Error("a refused serve made a token")
	}
}
