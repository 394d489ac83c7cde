package tools

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func fetchArgs(t *testing.T, u string) string { return argsJSON(t, map[string]any{"url": u}) }

func testServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	mux := http.NewServeMux()
	text := func(ct, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", ct)
			w.Write([]byte(body))
		}
	}
	mux.HandleFunc("/page", text("text/html; charset=utf-8", `<!doctype html><html><head><title>T</title>
<style>body{color:red}</style><script>alert("x")</script></head><body>
<h1>Title</h1><p>First   paragraph
with <b>bold</b> text.</p><script>var hidden = 1;</script><noscript>enable js</noscript>
<ul><li>one</li><li>two <a href="/next">next page</a></li></ul><div>a<br>b</div></body></html>`))
	mux.HandleFunc("/plain", text("text/plain", "just text\n"))
	mux.HandleFunc("/json", text("application/json", `{"a": 1}`))
	mux.HandleFunc("/feed", text("application/atom+xml", `<feed/>`))
	mux.HandleFunc("/pdf", text("application/pdf", "%PDF-1.4"))
	mux.HandleFunc("/sniffed", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil // suppress net/http's own sniffing
		w.Write([]byte("plain words"))
	})
	mux.HandleFunc("/empty", text("text/plain", ""))
	mux.HandleFunc("/big", text("text/plain", strings.Repeat("z", maxFetchBytes+1000)))
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/plain", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "http://169.254.169.254/latest/meta-data/")
		w.WriteHeader(http.StatusFound)
	})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte("<p>No such page</p>"))
	})
	mux.HandleFunc("/broken", text("image/png", "\x89PNG"))
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path == "/broken" {
			w.Header().Set("Content-Type", "image/png")
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func TestWebFetch(t *testing.T) {
	srv, _ := testServer(t)
	tool := &WebFetch{allowLoopback: true}
	fetch := func(path string) Result { return run(t, tool, fetchArgs(t, srv.URL+path)) }

	wantOK(t, fetch("/page"), "# Title\n\nFirst paragraph with bold text.\n\n- one\n- two next page ("+srv.URL+"/next)\n\na\nb")
	wantOK(t, fetch("/plain"), "just text\n")
	wantOK(t, fetch("/json"), `{"a": 1}`)
	wantOK(t, fetch("/feed"), `<feed/>`)
	wantOK(t, fetch("/sniffed"), "plain words")
	wantOK(t, fetch("/empty"), "(empty response)")
	wantOK(t, fetch("/moved"), "Redirected (HTTP 301) to "+srv.URL+"/plain; not followed. Fetch that URL if you want it.")
	wantOK(t, fetch("/away"), "Redirected (HTTP 302) to http://169.254.169.254/latest/meta-data/; not followed. Fetch that URL if you want it.")
	wantErr(t, fetch("/pdf"), `unsupported content type "application/pdf" at `+srv.URL+`/pdf: web_fetch only returns text (HTML, plain text, JSON, XML)`)
	r := fetch("/missing")
	if !r.IsError || r.Content != "HTTP 404 Not Found\n\nNo such page" {
		t.Fatalf("404: %+v", r)
	}
	wantErr(t, fetch("/broken"), "HTTP 500 Internal Server Error (content type image/png)")

	big := fetch("/big")
	if big.IsError || big.Content != strings.Repeat("z", maxFetchBytes)+"\n[... content truncated at 256 KiB]" {
		t.Fatalf("big: error=%v len=%d", big.IsError, len(big.Content))
	}

	slow := &WebFetch{allowLoopback: true, Timeout: 200 * time.Millisecond}
	start := time.Now()
	wantErr(t, run(t, slow, fetchArgs(t, srv.URL+"/slow")), "timed out after 200ms")
	if time.Since(start) > 3*time.Second {
		t.Fatal("timeout not enforced")
	}
}

func TestWebFetchCancel(t *testing.T) {
	srv, _ := testServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	r := (&WebFetch{allowLoopback: true}).Run(ctx, []byte(fetchArgs(t, srv.URL+"/slow")))
	wantErr(t, r, "context canceled")
}

func TestWebFetchBadURLs(t *testing.T) {
	tool := &WebFetch{}
	for u, want := range map[string]string{
		"ftp://example.com/x":  `unsupported URL scheme in "ftp://example.com/x": only http:// and https:// URLs can be fetched`,
		"file:///etc/passwd":   "only http:// and https:// URLs can be fetched",
		"example.com/page":     "only http:// and https:// URLs can be fetched",
		"http://":              `invalid URL "http://": it has no host`,
		"http://[::1":          `invalid URL "http://[::1"`,
		"javascript:alert(1)":  "only http:// and https:// URLs can be fetched",
		"https:///no-host/x":   "it has no host",
		"http://user@:80/path": "it has no host",
	} {
		wantErr(t, run(t, tool, fetchArgs(t, u)), want)
	}
}

// TestWebFetchRefusesNonPublic needs no network: every address is refused
// before a connection is attempted.
func TestWebFetchRefusesNonPublic(t *testing.T) {
	srv, hits := testServer(t)
	port := srv.URL[strings.LastIndexByte(srv.URL, ':'):]
	tool := &WebFetch{lookup: func(ctx context.Context, host string) ([]netip.Addr, error) {
		switch host {
		case "localhost":
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		case "rebind.test":
			// One public and one private answer: refused as a whole.
			return []netip.Addr{netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("10.0.0.5")}, nil
		}
		return nil, errors.New("no such host")
	}}
	for u, want := range map[string]string{
		srv.URL + "/plain":                          "127.0.0.1 is a loopback address",
		"http://localhost" + port + "/plain":        "localhost resolves to 127.0.0.1, which is a loopback address",
		"http://[::1]" + port + "/":                 "::1 is a loopback address",
		"http://[::ffff:127.0.0.1]" + port + "/":    "127.0.0.1 is a loopback address",
		"http://10.0.0.1/":                          "10.0.0.1 is a private address",
		"http://192.168.1.1/":                       "is a private address",
		"http://172.16.0.1/":                        "is a private address",
		"http://[fc00::1]/":                         "is a private address",
		"http://169.254.169.254/latest/meta-data/":  "169.254.169.254 is a cloud metadata address",
		"http://[fd00:ec2::254]/latest/meta-data/":  "fd00:ec2::254 is a cloud metadata address",
		"http://169.254.1.1/":                       "is a link-local address",
		"http://[fe80::1]/":                         "is a link-local address",
		"http://100.64.0.1/":                        "is a carrier-grade NAT address",
		"http://0.0.0.0/":                           "is an unspecified address",
		"http://[::]/":                              "is an unspecified address",
		"http://224.0.0.1/":                         "is a multicast address",
		"http://[ff02::1]/":                         "is a multicast address",
		"http://[64:ff9b::a00:1]/":                  "is a private address",
		"http://[2002:7f00:1::]/":                   "is a loopback address",
		"http://rebind.test/":                       "rebind.test resolves to 10.0.0.5, which is a private address",
		"http://2130706433" + port + "/":            "no such host",
		"https://127.0.0.1" + port + "/":            "127.0.0.1 is a loopback address",
		"http://127.1.2.3/":                         "is a loopback address",
		"http://[0:0:0:0:0:ffff:a9fe:a9fe]/latest/": "169.254.169.254 is a cloud metadata address",
	} {
		r := run(t, tool, fetchArgs(t, u))
		wantErr(t, r, want)
		if !strings.Contains(r.Content, "no such host") {
			wantErr(t, r, "refusing to fetch")
			wantErr(t, r, "only publicly-routable addresses can be fetched")
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("server was reached %d times", n)
	}

	// Allowing loopback for tests still refuses everything else.
	loop := &WebFetch{allowLoopback: true}
	wantErr(t, run(t, loop, fetchArgs(t, "http://10.0.0.1/")), "10.0.0.1 is a private address")
	wantErr(t, run(t, loop, fetchArgs(t, "http://169.254.169.254/")), "cloud metadata")
}

// TestWebFetchDialControl checks the last-line check on the socket address
// itself, which is what defeats DNS rebinding.
func TestWebFetchDialControl(t *testing.T) {
	tool := &WebFetch{}
	for addr, blocked := range map[string]bool{
		"127.0.0.1:80":            true,
		"10.1.2.3:443":            true,
		"[::1]:80":                true,
		"169.254.169.254:80":      true,
		"[::ffff:192.168.0.1]:80": true,
		"8.8.8.8:443":             false,
		"[2606:4700::1111]:443":   false,
	} {
		err := tool.control("tcp", addr, nil)
		if (err != nil) != blocked {
			t.Errorf("control(%s) = %v, want blocked=%v", addr, err, blocked)
		}
	}
	if err := tool.control("tcp", "not-an-address", nil); err == nil {
		t.Error("unparsable dial address allowed")
	}
}

func TestBlockedReason(t *testing.T) {
	for ip, want := range map[string]string{
		"1.1.1.1":          "",
		"93.184.216.34":    "",
		"2606:4700::1111":  "",
		"100.63.255.255":   "",
		"100.128.0.0":      "",
		"172.32.0.1":       "",
		"100.127.255.255":  "a carrier-grade NAT",
		"0.1.2.3":          "a reserved",
		"255.255.255.255":  "a reserved",
		"240.0.0.1":        "a reserved",
		"fd12::1":          "a private",
		"fe80::abcd":       "a link-local",
		"::ffff:10.0.0.1":  "a private",
		"2002:0808:0808::": "",
	} {
		if got := blockedReason(netip.MustParseAddr(ip)); got != want {
			t.Errorf("blockedReason(%s) = %q, want %q", ip, got, want)
		}
	}
}
