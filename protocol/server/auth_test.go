package server

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestTokenIsRequiredOnEverySurface: a server on loopback refuses every
// surface without the token (REST, /healthz, the sessions API's JSON
// routes and its SSE stream, both WebSockets) and serves each with it.
func TestTokenIsRequiredOnEverySurface(t *testing.T) {
	f := start(t, setup{token: "s3cret-0123456789abcdef"})
	_, id := f.open(t)
	conv := "/v1/sessions/conv_" + id
	routes := []struct{ method, path, body string }{
		{"GET", "/api/sessions", ""},
		{"GET", "/api/config", ""},
		{"PATCH", "/api/sessions/" + id, `{"title":"x"}`},
		{"GET", "/healthz", ""},
		{"GET", "/api/agents", ""},
		{"GET", "/v1/sessions", ""},
		{"POST", "/v1/sessions", `{"title":"t"}`},
		{"PATCH", conv, `{"title":"y"}`},
		{"POST", conv + "/events", `{"type":"interrupt","data":{}}`},
		{"GET", conv + "/resources/files", ""},
		{"GET", "/v1/conversations", ""},
		{"GET", "/v1/openapi.json", ""},
		{"GET", conv + "/stream", ""},
	}
	refusals := []struct {
		name   string
		header http.Header
	}{
		{"no token", nil},
		{"wrong token", http.Header{"Authorization": {"Bearer nope"}}},
		{"not bearer", http.Header{"Authorization": {"Basic czNjcmV0"}}},
	}
	for _, r := range routes {
		for _, ref := range refusals {
			code, body := f.do(t, r.method, r.path, "application/json", strings.NewReader(r.body), ref.header)
			msg, ok := errorText(r.path, body)
			if code != 401 || !ok || !strings.HasPrefix(msg, "unauthorized") || strings.Contains(string(body), "s3cret") {
				t.Errorf("%s %s, %s: %d %s, want 401", r.method, r.path, ref.name, code, body)
			}
		}
		if r.path == conv+"/stream" {
			continue // below: it streams
		}
		code, body := f.do(t, r.method, r.path, "application/json", strings.NewReader(r.body), f.authed(nil))
		if code/100 != 2 {
			t.Errorf("%s %s with the token: %d %s", r.method, r.path, code, body)
		}
	}
	// The SSE stream with the token; the query form is for WebSockets only.
	if code, _ := f.getAnon(t, conv+"/stream?token=s3cret-0123456789abcdef", nil); code != 401 {
		t.Errorf("stream with ?token=: %d, want 401", code)
	}
	stream := f.sse(t, conv+"/stream", nil)
	waitFor(t, func() bool { return stream.has("session.status", "idle") })

	ws := []struct {
		name   string
		path   string
		header http.Header
		status int
	}{
		{"ws without token", "/ws", nil, 401},
		{"ws wrong query token", "/ws?token=nope", nil, 401},
		{"acp without token", "/acp", nil, 401},
		{"acp without token, same origin", "/acp", http.Header{"Origin": {"http://" + f.addr}}, 401},
		{"ws query token", "/ws?token=s3cret-0123456789abcdef", nil, 101},
		{"acp header token", "/acp", http.Header{"Authorization": {"Bearer s3cret-0123456789abcdef"}}, 101},
		// The web client's way: the token in a subprotocol, never in the URL.
		{"ws subprotocol token", "/ws", subprotocols("openheim", TokenProtocol+base64.RawURLEncoding.EncodeToString([]byte("s3cret-0123456789abcdef"))), 101},
		{"ws wrong subprotocol token", "/ws", subprotocols("openheim", TokenProtocol+base64.RawURLEncoding.EncodeToString([]byte("nope"))), 401},
		{"ws subprotocol token not base64", "/ws", subprotocols("openheim", TokenProtocol+"s3cret/0123456789abcdef"), 401},
	}
	for _, tc := range ws {
		c, err := f.dialAnon(t, tc.path, tc.header)
		got := 0
		if c.resp != nil {
			got = c.resp.StatusCode
		}
		if got != tc.status {
			t.Errorf("%s: status %d (%v), want %d", tc.name, got, err, tc.status)
		}
		if tc.status == 101 && err == nil && tc.header.Get("Sec-WebSocket-Protocol") != "" {
			// A browser drops a socket whose server selected none of the
			// subprotocols it offered.
			if p := c.resp.Header.Get("Sec-WebSocket-Protocol"); p != "openheim" {
				t.Errorf("%s: selected subprotocol %q, want openheim", tc.name, p)
			}
		}
		if tc.status == 101 && err == nil && strings.HasPrefix(tc.path, "/ws") {
			expect(t, tc.name, c.next(), map[string]any{"channel": "fs", "data.type": "connected"})
		}
	}
}

// TestOriginAndHostChecks: browsers are served only from the server's own
// origin and the configured ones; other localhost pages (another port, a
// *.localhost name) are refused.
func TestOriginAndHostChecks(t *testing.T) {
	f := start(t, setup{extra: "[serve]\nallowed_origins = [\"https://app.example.com\", \"http://localhost:5173\"]\n"})
	_, port, _ := net.SplitHostPort(f.addr)
	other := freePort(t)
	cases := []struct {
		name   string
		host   string // Host header; "" is the address dialled
		origin string
		status int
	}{
		{"no origin (not a browser)", "", "", 101},
		{"same origin", "", "http://" + f.addr, 101},
		{"same origin by name", "localhost:" + port, "http://localhost:" + port, 101},
		{"same host and port over https (a TLS proxy)", "", "https://" + f.addr, 101},
		{"configured origin", "", "https://app.example.com", 101},
		{"configured localhost dev server", "", "http://localhost:5173", 101},
		{"another localhost port", "", "http://localhost:9999", 403},
		{"a *.localhost name", "", "http://evil.localhost", 403},
		{"a *.localhost name on our port", "", "http://evil.localhost:" + port, 403},
		{"loopback, another port", "", "http://127.0.0.1:" + other, 403},
		{"ipv6 loopback, another port", "", "http://[::1]:" + other, 403},
		{"our name, another port", "localhost:" + port, "http://localhost:" + other, 403},
		{"foreign origin", "", "https://evil.example.com", 403},
		{"null origin", "", "null", 403},
	}
	for _, tc := range cases {
		h := http.Header{}
		if tc.origin != "" {
			h.Set("Origin", tc.origin)
		}
		if tc.host != "" {
			h.Set("Host", tc.host)
		}
		for _, path := range []string{"/ws", "/acp"} {
			c, err := f.dial(t, path, h)
			got := 0
			if c.resp != nil {
				got = c.resp.StatusCode
			}
			if got != tc.status {
				t.Errorf("%s %s: status %d (%v), want %d", tc.name, path, got, err, tc.status)
			}
		}
		want := map[int]int{101: 200, 403: 403}[tc.status]
		if code, body := f.getWithHost(t, "/api/models", tc.host, h); code != want {
			t.Errorf("%s REST: %d %s, want %d", tc.name, code, body, want)
		}
	}
	// Preflight: every method the APIs use, without the token (browsers
	// send none on a preflight).
	req, _ := http.NewRequest(http.MethodOptions, f.url("/v1/sessions/conv_x"), nil)
	req.Header.Set("Origin", "https://app.example.com")
	req.Header.Set("Access-Control-Request-Method", "PATCH")
	req.Header.Set("Access-Control-Request-Headers", "authorization, content-type")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	methods := resp.Header.Get("Access-Control-Allow-Methods")
	if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Errorf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	for _, m := range []string{"GET", "POST", "PATCH", "DELETE", "OPTIONS"} {
		if !strings.Contains(methods, m) {
			t.Errorf("preflight allows %q, not %s", methods, m)
		}
	}
	req.Header.Set("Origin", "http://localhost:9999")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 403 {
		t.Errorf("foreign preflight: %v %v", resp, err)
	}
}

// TestInsecureNoAuth: without a token (on purpose) every request is served
// on loopback, but only for loopback Host names (DNS rebinding); New
// refuses a missing token otherwise, and no token on a public address.
func TestInsecureNoAuth(t *testing.T) {
	f := start(t, setup{noAuth: true})
	if code, body := f.getAnon(t, "/api/sessions", nil); code != 200 {
		t.Errorf("no token needed: %d %s", code, body)
	}
	if code, _ := f.getWithHost(t, "/api/sessions", "attacker.example.com", nil); code != 403 {
		t.Errorf("rebound Host: %d, want 403", code)
	}
	if code, _ := f.getWithHost(t, "/api/sessions", "evil.localhost:1217", http.Header{"Origin": {"http://evil.localhost:1217"}}); code != 200 {
		// A *.localhost name resolves to this machine only: not a rebinding.
		t.Errorf("*.localhost Host: %d", code)
	}
	if _, err := New(Options{Engine: f.eng, Loopback: true}); err == nil || !strings.Contains(err.Error(), "no token") {
		t.Errorf("New without a token: %v", err)
	}
	if _, err := New(Options{Engine: f.eng, InsecureNoAuth: true}); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("New without a token on a public address: %v", err)
	}
}

// getWithHost is get with the Host header set (when host is not "").
func (f *fixture) getWithHost(t *testing.T, path, host string, header http.Header) (int, []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", f.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if host == "" {
		host = f.addr
	}
	h := f.authed(header)
	h.Del("Host")
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n", path, host)
	h.Write(conn)
	fmt.Fprint(conn, "\r\n")
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	bufio.NewReader(resp.Body).WriteTo(&b)
	return resp.StatusCode, []byte(b.String())
}

// freePort is a loopback port no server of this test listens on.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

func TestLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1": true, "127.0.0.1:1217": true, "[::1]:1217": true, "::1": true, "localhost:1": true,
		"app.localhost": true, "LOCALHOST": true, "0.0.0.0": false, "": false, "10.0.0.1:1217": false,
		"localhost.evil.com": false, "evil.com": false,
	} {
		if got := IsLoopback(host); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestSameOrigin(t *testing.T) {
	for _, tc := range []struct {
		origin, host string
		want         bool
	}{
		{"http://127.0.0.1:1217", "127.0.0.1:1217", true},
		{"http://LOCALHOST:1217", "localhost:1217", true},
		{"http://example.com", "example.com", true},
		{"https://example.com", "example.com", true},
		{"http://example.com:80", "example.com", true},
		{"https://example.com:443", "example.com:443", true},
		{"http://[::1]:1217", "[::1]:1217", true},
		{"http://example.com", "example.com:8080", false},
		{"https://example.com", "example.com:80", false},
		{"http://localhost:1218", "localhost:1217", false},
		{"http://a.localhost:1217", "localhost:1217", false},
		{"ws://127.0.0.1:1217", "127.0.0.1:1217", false},
		{"http://u@127.0.0.1:1217", "127.0.0.1:1217", false},
		{"null", "127.0.0.1:1217", false},
	} {
		if got := sameOrigin(tc.origin, tc.host); got != tc.want {
			t.Errorf("sameOrigin(%q, %q) = %v, want %v", tc.origin, tc.host, got, tc.want)
		}
	}
}

func subprotocols(p ...string) http.Header {
	return http.Header{"Sec-WebSocket-Protocol": {strings.Join(p, ", ")}}
}
