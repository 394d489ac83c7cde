package redact

import (
	"encoding/base64"
	"net/url"
	"strings"
	"unicode"
)

// Which parts of a config value are secret. Some fields are secret whole
// (an API key, a header value, URL userinfo); others mix settings and
// credentials (a command's args, its environment, a URL's query), and
// masking every one of their values would mask paths, model names and dates
// all over the output. For those a value is secret when its name says so
// (TOKEN=, --api-key, ?token=) or when it looks like a credential: a run of
// at least 12 letters and digits mixing both (sk-proj-3Fa9..., ghp_16C7e4...,
// hex and base64 keys) or of at least 24 alphanumerics. A short password
// passed in a value named like a setting is not recognised; pass it in a
// variable or flag whose name says what it is.

// secretWords are name segments (split at _ - . and case changes are not
// considered) that say a value is a credential.
var secretWords = map[string]bool{
	"token": true, "tokens": true, "secret": true, "secrets": true, "password": true, "passwd": true,
	"pwd": true, "pass": true, "key": true, "apikey": true, "auth": true, "authorization": true,
	"credential": true, "credentials": true, "bearer": true, "pat": true, "sig": true,
	"signature": true, "cookie": true, "session": true, "private": true,
}

// SecretName reports whether a variable, flag, header or query parameter
// name says its value is a credential (GITHUB_TOKEN, --api-key, x-api-key,
// client_secret, sig).
func SecretName(name string) bool {
	name = strings.ToLower(strings.TrimLeft(name, "-"))
	if strings.Contains(name, "apikey") || strings.Contains(name, "accesskey") || strings.Contains(name, "password") || strings.Contains(name, "token") || strings.Contains(name, "secret") {
		return true
	}
	for _, seg := range strings.FieldsFunc(name, func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
		if secretWords[seg] {
			return true
		}
	}
	return false
}

// LooksSecret reports whether a value of unknown meaning looks like a
// credential (see the package's rules above). Paths, URLs (see URLSecrets)
// and text with spaces never do.
func LooksSecret(v string) bool {
	if len(v) < MinLen || isPath(v) || strings.Contains(v, "://") || strings.ContainsFunc(v, unicode.IsSpace) {
		return false
	}
	run, letters, digits := 0, false, false
	check := func() bool {
		return (run >= 12 && letters && digits) || run >= 24
	}
	for _, c := range v {
		switch {
		case c >= '0' && c <= '9':
			run++
			digits = true
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
			run++
			letters = true
		default:
			if check() {
				return true
			}
			run, letters, digits = 0, false, false
		}
	}
	return check()
}

func isPath(v string) bool {
	return strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~") || strings.HasPrefix(v, "./") || strings.HasPrefix(v, "../")
}

// URLSecrets returns the secret parts of a URL: its userinfo (whole, user
// and password) and the values of its query that are secret by name or by
// look, and its fragment when it carries parameters (#access_token=...).
// A value that does not parse as a URL gives nothing.
func URLSecrets(raw string) []string {
	if !strings.Contains(raw, "://") {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	var out []string
	if u.User != nil {
		user := u.User.Username()
		p, _ := u.User.Password()
		// The Basic credential net/http sends for it, echoed by servers.
		basic := base64.StdEncoding.EncodeToString([]byte(user + ":" + p))
		out = append(out, u.User.String(), user+":"+p, user, p, basic)
	}
	out = append(out, querySecrets(u.RawQuery)...)
	if strings.Contains(u.Fragment, "=") {
		out = append(out, querySecrets(u.Fragment)...)
	}
	return out
}

func querySecrets(raw string) []string {
	q, _ := url.ParseQuery(raw)
	var out []string
	for k, vs := range q {
		for _, v := range vs {
			if SecretName(k) || LooksSecret(v) {
				out = append(out, v)
			}
		}
	}
	return out
}

// HeaderSecrets returns a header value and, for "Scheme credential" forms
// (Bearer, Basic, Token), the credential alone: both are secret whatever
// the header's name, since gateways put tokens in headers of any name.
func HeaderSecrets(v string) []string {
	v = strings.TrimSpace(v)
	out := []string{v}
	if scheme, cred, ok := strings.Cut(v, " "); ok && !strings.ContainsAny(scheme, "=,") {
		out = append(out, strings.TrimSpace(cred))
	}
	return out
}

// EnvSecrets returns the secret values of an environment: those whose
// variable's name says so (unless they are paths), those that look like a
// credential, and the secret parts of URL values.
func EnvSecrets(env map[string]string) []string {
	var out []string
	for k, v := range env {
		out = append(out, named(k, v)...)
	}
	return out
}

// named is the secret part of a value with a name (a variable, a flag).
func named(name, v string) []string {
	switch {
	case strings.Contains(v, "://"):
		return URLSecrets(v)
	case SecretName(name) && !isPath(v):
		return []string{v}
	case LooksSecret(v):
		return []string{v}
	}
	return nil
}

// ArgSecrets returns the secret values of a command line: the value of a
// flag named like a credential (--token=X, --token X, -p X is not
// recognised), of NAME=VALUE arguments by the same rule, arguments that
// look like a credential, and the secret parts of URL arguments.
func ArgSecrets(args []string) []string {
	var out []string
	for i, a := range args {
		if k, v, ok := strings.Cut(a, "="); ok && !strings.Contains(k, "://") && k != "" {
			out = append(out, named(k, v)...)
			if LooksSecret(k) { // base64 padding, not NAME=VALUE
				out = append(out, a)
			}
			continue
		}
		if i > 0 && strings.HasPrefix(args[i-1], "-") && !strings.Contains(args[i-1], "=") && SecretName(args[i-1]) {
			if !isPath(a) && !strings.HasPrefix(a, "-") {
				out = append(out, a)
			}
			continue
		}
		out = append(out, named("", a)...)
	}
	return out
}
