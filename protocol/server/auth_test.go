package server

import (
	"net/http"
	"strings"
	"testing"
)

func TestTokenIsRequiredOfEveryRequest(t *testing.T) {
	f := start(t, setup{token: "s3cret"})
	cases := []struct {
		name   string
		path   string
		header http.Header
		status int
	}{
		{"no token", "/api/sessions", nil, 401},
		{"no token, healthz", "/healthz", nil, 401},
		{"wrong token", "/api/sessions", http.Header{"Authorization": {"Bearer nope"}}, 401},
		{"not bearer", "/api/sessions", http.Header{"Authorization": {"Basic czNjcmV0"}}, 401},
		{"query token is for WebSockets only", "/api/sessions?token=s3cret", nil, 401},
		{"right token", "/api/sessions", http.Header{"Authorization": {"Bearer s3cret"}}, 200},
		{"scheme is case-insensitive", "/healthz", http.Header{"Authorization": {"bearer s3cret"}}, 200},
	}
	for _, tc := range cases {
		status, body := f.get(t, tc.path, tc.header)
		if status != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.name, status, body, tc.status)
		}
		if status == 401 && (!strings.Contains(string(body), `"error":"unauthorized`) || strings.Contains(string(body), "s3cret")) {
			t.Errorf("%s: body %s", tc.name, body)
		}
	}

	ws := []struct {
		name   string
		path   string
		header http.Header
		status int
	}{
		{"ws without token", "/ws", nil, 401},
		{"ws wrong query token", "/ws?token=nope", nil, 401},
		{"acp without token", "/acp", nil, 401},
		{"ws query token", "/ws?token=s3cret", nil, 101},
		{"acp header token", "/acp", http.Header{"Authorization": {"Bearer s3cret"}}, 101},
	}
	for _, tc := range ws {
		c, err := f.dial(t, tc.path, tc.header)
		got := 0
		if c.resp != nil {
			got = c.resp.StatusCode
		}
		if got != tc.status {
			t.Errorf("%s: status %d (%v), want %d", tc.name, got, err, tc.status)
		}
		if tc.status == 101 && err == nil && strings.HasPrefix(tc.path, "/ws") {
			expect(t, tc.name, c.next(), map[string]any{"channel": "fs", "data.type": "connected"})
		}
	}
}

func TestOriginAndHostChecks(t *testing.T) {
	f := start(t, setup{extra: "[serve]\nallowed_origins = [\"https://app.example.com\"]\n"})
	cases := []struct {
		name   string
		header http.Header
		status int
	}{
		{"no origin (not a browser)", nil, 101},
		{"same origin", http.Header{"Origin": {"http://" + f.addr}}, 101},
		{"localhost dev server", http.Header{"Origin": {"http://localhost:5173"}}, 101},
		{"configured origin", http.Header{"Origin": {"https://app.example.com"}}, 101},
		{"foreign origin", http.Header{"Origin": {"https://evil.example.com"}}, 403},
		{"null origin", http.Header{"Origin": {"null"}}, 403},
	}
	for _, tc := range cases {
		for _, path := range []string{"/ws", "/acp"} {
			c, err := f.dial(t, path, tc.header)
			got := 0
			if c.resp != nil {
				got = c.resp.StatusCode
			}
			if got != tc.status {
				t.Errorf("%s %s: status %d (%v), want %d", tc.name, path, got, err, tc.status)
			}
		}
	}
	// REST: a foreign page is refused; an allowed one gets CORS headers.
	if status, body := f.get(t, "/api/models", http.Header{"Origin": {"https://evil.example.com"}}); status != 403 {
		t.Errorf("foreign origin REST: %d %s", status, body)
	}
	req, _ := http.NewRequest(http.MethodOptions, f.url("/api/sessions"), nil)
	req.Header.Set("Origin", "https://app.example.com")
	req.Header.Set("Access-Control-Request-Method", "GET")
	req.Header.Set("Access-Control-Request-Headers", "authorization")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Errorf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	// DNS rebinding: without a token only loopback Host names are served.
	req, _ = http.NewRequest(http.MethodGet, f.url("/api/sessions"), nil)
	req.Host = "attacker.example.com"
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Errorf("rebound Host: %d, want 403", resp.StatusCode)
	}
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
