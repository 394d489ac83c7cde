package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/openheim/openheim/runtime/llm"
)

const (
	// DefaultFetchTimeout and maxFetchBytes are promised in the tool
	// description.
	DefaultFetchTimeout = 20 * time.Second
	maxFetchBytes       = 256 << 10
)

// WebFetch fetches a public http(s) URL as text.
//
// The model chooses the URL, so without a guard it could reach services
// only the host can see: a local admin port, the LAN, or the cloud metadata
// endpoint that hands out credentials. Every address is checked at dial
// time, after DNS resolution, so a name that resolves to a public address
// when looked up and a private one when connected (DNS rebinding) is still
// refused.
type WebFetch struct {
	// Timeout bounds the whole request; zero means DefaultFetchTimeout.
	Timeout time.Duration

	// allowLoopback lets tests talk to an httptest server on 127.0.0.1;
	// every other non-public range stays refused.
	allowLoopback bool
	// lookup replaces DNS in tests.
	lookup func(ctx context.Context, host string) ([]netip.Addr, error)
}

func (*WebFetch) Spec() llm.ToolSpec {
	return spec(webFetchName, webFetchDescription, webFetchParams)
}

func (*WebFetch) Kind() string { return KindFetch }

// blockedError is a refused destination address.
type blockedError struct {
	host   string
	addr   netip.Addr
	reason string
}

func (e *blockedError) Error() string {
	if e.host != "" {
		return fmt.Sprintf("%s resolves to %s, which is %s address", e.host, e.addr, e.reason)
	}
	return fmt.Sprintf("%s is %s address", e.addr, e.reason)
}

func (t *WebFetch) Run(ctx context.Context, raw json.RawMessage) Result {
	a := parseArgs(raw)
	rawURL := a.str("url", true)
	if err := a.Err(); err != nil {
		return Errorf("%v", err)
	}
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil {
		return Errorf("invalid URL %q: %v", rawURL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return Errorf("unsupported URL scheme in %q: only http:// and https:// URLs can be fetched", rawURL)
	}
	if u.Hostname() == "" {
		return Errorf("invalid URL %q: it has no host", rawURL)
	}
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = DefaultFetchTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Errorf("invalid URL %q: %v", rawURL, err)
	}
	req.Header.Set("User-Agent", "openheim-web-fetch/1.0")
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,application/xml;q=0.8,*/*;q=0.5")
	client := t.client()
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		var be *blockedError
		switch {
		case errors.As(err, &be):
			return Errorf("refusing to fetch %s: %v; only publicly-routable addresses can be fetched", u.Redacted(), be)
		case ctx.Err() == context.DeadlineExceeded:
			return Errorf("fetching %s timed out after %s", u.Redacted(), timeout)
		default:
			return Errorf("fetching %s failed: %v", u.Redacted(), err)
		}
	}
	defer resp.Body.Close()
	return t.response(u, resp)
}

func (t *WebFetch) response(u *url.URL, resp *http.Response) Result {
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		if loc := resp.Header.Get("Location"); loc != "" {
			// Resolving here saves the model from joining a relative
			// Location itself; the next fetch is checked like any other.
			if target, err := u.Parse(loc); err == nil {
				loc = target.String()
			}
			return Result{Content: sprintf("Redirected (HTTP %d) to %s; not followed. Fetch that URL if you want it.", resp.StatusCode, loc)}
		}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxFetchBytes+1))
	if err != nil {
		return Errorf("reading %s failed: %v", u.Redacted(), err)
	}
	truncated := len(body) > maxFetchBytes
	if truncated {
		body = body[:maxFetchBytes]
	}
	ok := resp.StatusCode >= 200 && resp.StatusCode < 300
	status := "HTTP " + resp.Status
	if resp.Status == "" {
		status = sprintf("HTTP %d", resp.StatusCode)
	}
	mediaType := contentType(resp.Header.Get("Content-Type"), body)
	kind := textKind(mediaType)
	if kind == "" {
		if !ok {
			return Errorf("%s (content type %s)", status, mediaType)
		}
		return Errorf("unsupported content type %q at %s: web_fetch only returns text (HTML, plain text, JSON, XML)", mediaType, u.Redacted())
	}
	var text string
	if kind == "html" {
		text = htmlToText(body, u)
	} else {
		text = strings.ToValidUTF8(string(trimPartialRune(body)), "\uFFFD")
	}
	if truncated {
		text += sprintf("\n[... content truncated at %d KiB]", maxFetchBytes>>10)
	}
	if !ok {
		return Errorf("%s\n\n%s", status, text)
	}
	if strings.TrimSpace(text) == "" {
		return Result{Content: "(empty response)"}
	}
	return Result{Content: text}
}

// contentType returns the media type, sniffing when the server sent none.
func contentType(header string, body []byte) string {
	if header == "" {
		header = http.DetectContentType(body)
	}
	mt, _, err := mime.ParseMediaType(header)
	if err != nil {
		return strings.ToLower(strings.TrimSpace(strings.Split(header, ";")[0]))
	}
	return mt
}

// textKind classifies a media type as "html", "text" or "" (refused).
func textKind(mt string) string {
	switch {
	case mt == "text/html", mt == "application/xhtml+xml":
		return "html"
	case strings.HasPrefix(mt, "text/"),
		mt == "application/json", strings.HasSuffix(mt, "+json"),
		mt == "application/xml", strings.HasSuffix(mt, "+xml"),
		mt == "application/javascript", mt == "application/x-javascript",
		mt == "application/x-ndjson", mt == "application/yaml", mt == "application/x-yaml":
		return "text"
	}
	return ""
}

func (t *WebFetch) client() *http.Client {
	dialer := &net.Dialer{Timeout: 10 * time.Second, Control: t.control}
	transport := &http.Transport{
		// No proxy: the check below must see the real destination, and a
		// proxy on localhost would be refused anyway.
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return t.dial(ctx, dialer, network, addr)
		},
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: DefaultFetchTimeout,
	}
	return &http.Client{
		Transport: transport,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			// A redirect could point at an internal host; reporting it
			// lets the next fetch go through the same checks.
			return http.ErrUseLastResponse
		},
	}
}

// dial resolves host once, refuses the whole name if any address is
// non-public (a mixed answer is a rebinding tell), and dials the checked
// addresses directly so no second lookup can substitute another.
func (t *WebFetch) dial(ctx context.Context, d *net.Dialer, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	ips, err := t.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	named := host
	if _, err := netip.ParseAddr(host); err == nil {
		named = "" // an address literal needs no "resolves to"
	}
	for _, ip := range ips {
		if reason := t.blocked(ip); reason != "" {
			return nil, &blockedError{host: named, addr: ip.Unmap(), reason: reason}
		}
	}
	var firstErr error
	for _, ip := range ips {
		conn, err := d.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return conn, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, firstErr
}

func (t *WebFetch) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return []netip.Addr{ip}, nil
	}
	if t.lookup != nil {
		return t.lookup(ctx, host)
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("no addresses found for %s", host)
	}
	return ips, nil
}

// control re-checks the socket address right before connect, covering any
// dial path that bypassed dial's own check.
func (t *WebFetch) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("cannot check dial address %q: %w", address, err)
	}
	if reason := t.blocked(ap.Addr()); reason != "" {
		return &blockedError{addr: ap.Addr().Unmap(), reason: reason}
	}
	return nil
}

func (t *WebFetch) blocked(ip netip.Addr) string {
	reason := blockedReason(ip)
	if reason == "a loopback" && t.allowLoopback {
		return ""
	}
	return reason
}
