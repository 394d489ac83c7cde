package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestWebClientServed: the page and its files load without the token (the
// page then asks for it); the API still needs it; unknown paths are JSON
// 404s; the page is sent with a restrictive CSP.
func TestWebClientServed(t *testing.T) {
	f := start(t, setup{token: "s3cret"})
	code, body := f.getAnon(t, "/", nil)
	if code != 200 || !strings.Contains(string(body), "<html") {
		t.Fatalf("GET /: %d %.200s", code, body)
	}
	resp, err := http.Get(f.url("/"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("CSP: %q", csp)
	}
	if code, _ := f.getAnon(t, "/app.js", nil); code != 200 {
		t.Errorf("GET /app.js: %d", code)
	}
	if code, body := f.getAnon(t, "/nope.js", nil); code != 401 && code != 404 {
		t.Errorf("GET /nope.js: %d %s", code, body)
	}
	if code, _ := f.getAnon(t, "/api/config", nil); code != 401 {
		t.Errorf("the API without a token: %d", code)
	}
	if code, _ := f.get(t, "/api/config", http.Header{"Authorization": {"Bearer s3cret"}}); code != 200 {
		t.Errorf("the API with the token: %d", code)
	}
}
