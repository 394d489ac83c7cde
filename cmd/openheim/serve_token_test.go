package main

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// status is the HTTP status of GET url, with the token when not "".
func status(t *testing.T, url, token string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// wsStatus is the handshake status of a WebSocket to url.
func wsStatus(t *testing.T, url string) int {
	t.Helper()
	c, resp, err := (&websocket.Dialer{HandshakeTimeout: 5 * time.Second}).Dial(url, nil)
	if err == nil {
		c.Close()
	}
	if resp == nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	return resp.StatusCode
}

// stopServe ends s with SIGTERM and waits for it.
func stopServe(t *testing.T, s *served) {
	t.Helper()
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(15 * time.Second):
		t.Fatalf("openheim serve did not stop\n%s", s.stderr())
	}
}

var urlSafeToken = regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)

// TestServeTokenByDefault: with no token given, serve makes a random one,
// keeps it 0600 in $OPENHEIM_HOME/serve_token, prints the web client's
// address with it after "#" (on that line only), requires it on every
// surface, uses the same one after a restart, and replaces a file other
// users could read.
func TestServeTokenByDefault(t *testing.T) {
	r := newRig(t)
	srv := startServe(t, r)
	path := filepath.Join(r.home, "serve_token")
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%s: %v %v, want mode 0600", path, fi, err)
	}
	if data, _ := os.ReadFile(path); strings.TrimSpace(string(data)) != srv.token || !urlSafeToken.MatchString(srv.token) {
		t.Fatalf("printed token %q, file %q: want the same 256-bit URL-safe token", srv.token, data)
	}
	for _, line := range strings.Split(srv.stderr(), "\n") {
		if strings.Contains(line, srv.token) && !strings.HasPrefix(line, "openheim: web client: ") {
			t.Errorf("the token appears outside the web client's address: %q", line)
		}
	}
	if !strings.Contains(srv.stderr(), "new token in "+path) {
		t.Errorf("stderr does not say where the new token is kept:\n%s", srv.stderr())
	}
	ws := "ws" + strings.TrimPrefix(srv.url, "http")
	for _, p := range []string{"/api/sessions", "/v1/sessions", "/healthz"} {
		if got := status(t, srv.url+p, ""); got != 401 {
			t.Errorf("GET %s without the token: %d", p, got)
		}
		if got := status(t, srv.url+p, srv.token); got != 200 {
			t.Errorf("GET %s with the token: %d", p, got)
		}
	}
	if got := status(t, srv.url+"/", ""); got != 200 {
		t.Errorf("the web client's page without the token: %d", got)
	}
	for _, p := range []string{"/ws", "/acp"} {
		if got := wsStatus(t, ws+p); got != 401 {
			t.Errorf("%s without the token: %d", p, got)
		}
		if got := wsStatus(t, ws+p+"?token="+srv.token); got != 101 {
			t.Errorf("%s with the token: %d", p, got)
		}
	}
	stopServe(t, srv)

	again := startServe(t, r)
	if again.token != srv.token || !strings.Contains(again.stderr(), "token in "+path) || strings.Contains(again.stderr(), "new token") {
		t.Errorf("after a restart: token %q (was %q)\n%s", again.token, srv.token, again.stderr())
	}
	stopServe(t, again)

	os.Chmod(path, 0o644)
	loose := startServe(t, r)
	if loose.token == srv.token || !strings.Contains(loose.stderr(), "warning: made a new token") {
		t.Errorf("a world-readable token file was used: %q\n%s", loose.token, loose.stderr())
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("replaced with mode %v", fi.Mode())
	}
	if got := status(t, loose.url+"/api/sessions", srv.token); got != 401 {
		t.Errorf("the old token still works: %d", got)
	}
}

// TestServeGivenTokenOrNone: a given token is required and never printed
// nor stored; --insecure-no-auth serves loopback without one, loudly.
func TestServeGivenTokenOrNone(t *testing.T) {
	r := newRig(t)
	const given = "given-token-0123456789abcdef"
	srv := startServeWith(t, r, nil, "OPENHEIM_TOKEN="+given)
	if strings.Contains(srv.stderr(), given) || srv.web != srv.url+"/" {
		t.Errorf("a given token was printed (web client %q):\n%s", srv.web, srv.stderr())
	}
	if _, err := os.Stat(filepath.Join(r.home, "serve_token")); err == nil {
		t.Error("a token file was made although a token was given")
	}
	if status(t, srv.url+"/api/sessions", "") != 401 || status(t, srv.url+"/api/sessions", given) != 200 {
		t.Error("the given token is not the one required")
	}
	stopServe(t, srv)

	open := startServeWith(t, r, []string{"--insecure-no-auth"})
	if !strings.Contains(open.stderr(), "WARNING: --insecure-no-auth") || !strings.Contains(open.stderr(), "NO AUTHENTICATION") {
		t.Errorf("no loud warning:\n%s", open.stderr())
	}
	if got := status(t, open.url+"/api/sessions", ""); got != 200 {
		t.Errorf("--insecure-no-auth: %d without a token", got)
	}
	stopServe(t, open)
}
