package server

import (
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/openheim/openheim/protocol/sessionsapi"
)

// Guard puts the access check of `openheim serve` in front of h (also
// used by `openheim mcp serve --http`): every request needs token; an
// empty token (authentication off on purpose, loopback listeners only)
// serves only loopback Host names instead. Browsers' origins must be the
// server's own or one of allowedOrigins.
func Guard(h http.Handler, token string, allowedOrigins []string) http.Handler {
	return guard{token: token, loopbackOnly: token == "", allowedOrigins: allowedOrigins}.wrap(h)
}

// guard is the access check in front of every route: the Host header
// (DNS rebinding), the Origin of browsers, and the bearer token.
type guard struct {
	token          string
	loopbackOnly   bool     // no token: only loopback Host names
	allowedOrigins []string // exact origins, or "*"
	// public requests need no token (the web client's own files, so the
	// page can load and ask for it); the Host and Origin checks still hold.
	public func(*http.Request) bool
}

// corsMethods are the methods the APIs use, for preflight answers.
const corsMethods = "GET, POST, PATCH, DELETE, OPTIONS"

func (g guard) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.loopbackOnly && !loopbackHost(r.Host) {
			// A web page that rebinds its own name to 127.0.0.1 must not
			// read a token-less server.
			jsonError(w, r, http.StatusForbidden, "host not allowed: "+r.Host)
			return
		}
		origin := r.Header.Get("Origin")
		if origin != "" && !g.originAllowed(origin, r.Host) {
			jsonError(w, r, http.StatusForbidden, "origin not allowed: "+origin)
			return
		}
		if origin != "" {
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", origin)
			h.Add("Vary", "Origin")
			if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
				h.Set("Access-Control-Allow-Methods", corsMethods)
				h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Last-Event-ID")
				h.Set("Access-Control-Max-Age", "600")
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		if g.token != "" && (g.public == nil || !g.public(r)) {
			if why := g.refuse(r); why != "" {
				w.Header().Set("WWW-Authenticate", `Bearer realm="openheim"`)
				jsonError(w, r, http.StatusUnauthorized, why)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// refuse returns why r is not authorised, or "".
func (g guard) refuse(r *http.Request) string {
	got, ok := "", false
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, cred, found := strings.Cut(h, " ")
		if !found || !strings.EqualFold(scheme, "Bearer") {
			return "unauthorized: the Authorization header must be \"Bearer <token>\""
		}
		got, ok = strings.TrimSpace(cred), true
	} else if t, found := protocolToken(r); found {
		got, ok = t, true
	} else if isUpgrade(r) && r.URL.Query().Has("token") {
		// Browsers cannot set headers on a WebSocket handshake; a query
		// string can end up in proxy logs, so the subprotocol is preferred.
		got, ok = r.URL.Query().Get("token"), true
	}
	if !ok {
		return "unauthorized: a token is required (Authorization: Bearer <token>)"
	}
	if subtle.ConstantTimeCompare([]byte(got), []byte(g.token)) != 1 {
		return "unauthorized: invalid token"
	}
	return ""
}

// originAllowed accepts the server's own origin and the configured ones;
// any other page, localhost included (another local dev server, a
// *.localhost name), is refused.
func (g guard) originAllowed(origin, host string) bool {
	for _, o := range g.allowedOrigins {
		if o == "*" || strings.EqualFold(strings.TrimSuffix(o, "/"), origin) {
			return true
		}
	}
	return sameOrigin(origin, host)
}

// sameOrigin reports whether origin is the server's own: an http or https
// origin whose host and port are those of the request's Host (a missing
// port is the scheme's default), which is what a page the server itself
// served sends. The scheme is not compared: behind a proxy that ends TLS
// the page is https and the request to the server is not.
func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || u.User != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return strings.EqualFold(withPort(u.Host, u.Scheme), withPort(host, u.Scheme))
}

// withPort is hostport with the scheme's default port when it has none.
func withPort(hostport, scheme string) string {
	if _, _, err := net.SplitHostPort(hostport); err == nil {
		return hostport
	}
	port := "80"
	if scheme == "https" {
		port = "443"
	}
	return net.JoinHostPort(strings.Trim(hostport, "[]"), port)
}

// loopbackHost reports whether a Host header (name or IP, with or without
// a port) names this machine's loopback.
func loopbackHost(hostport string) bool {
	h := hostport
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		h = host
	}
	h = strings.TrimSuffix(strings.Trim(h, "[]"), ".")
	if strings.EqualFold(h, "localhost") || strings.HasSuffix(strings.ToLower(h), ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// IsLoopback reports whether binding host listens on loopback only.
func IsLoopback(host string) bool {
	if host == "" {
		return false // every interface
	}
	return loopbackHost(host)
}

// TokenProtocol prefixes the subprotocol a browser carries the token in
// on a WebSocket handshake (the one header it may set there):
// "openheim.bearer." and the token in unpadded base64url, offered beside
// ws.Subprotocol, which the server selects.
const TokenProtocol = "openheim.bearer."

// protocolToken is the token of a handshake's TokenProtocol subprotocol.
func protocolToken(r *http.Request) (string, bool) {
	if !isUpgrade(r) {
		return "", false
	}
	for _, h := range r.Header.Values("Sec-WebSocket-Protocol") {
		for _, p := range strings.Split(h, ",") {
			enc, found := strings.CutPrefix(strings.TrimSpace(p), TokenProtocol)
			if !found {
				continue
			}
			t, err := base64.RawURLEncoding.DecodeString(enc)
			return string(t), err == nil
		}
	}
	return "", false
}

func isUpgrade(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// jsonError answers r with an error in the shape of the API r is for:
// seed 003's {"error": {"code", "message"}} on the sessions API's routes,
// seed 000's {"error": "..."} elsewhere.
func jsonError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	var body any = map[string]string{"error": msg}
	if sessionsAPIPath(r.URL.Path) {
		body = sessionsapi.ErrorBody(status, msg)
	}
	json.NewEncoder(w).Encode(body)
}

// sessionsAPIPath reports whether path is a route of the sessions API
// (seed 003): /v1/... and /api/agents.
func sessionsAPIPath(path string) bool {
	return strings.HasPrefix(path, "/v1/") || path == "/api/agents" || strings.HasPrefix(path, "/api/agents/")
}

// BodyLimit bounds every request body of h to maxBody bytes: a declared
// length over it is answered 413 before h runs, and a longer chunked body
// fails h's read (for handlers that do not decode JSON themselves, such as
// `mcp serve --http`'s MCP handler).
func BodyLimit(h http.Handler, maxBody int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > maxBody {
			jsonError(w, r, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body too large (over %d bytes)", maxBody))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		h.ServeHTTP(w, r)
	})
}
