package commands

import (
	"fmt"

	"github.com/openheim/openheim/protocol/server"
)

// serveAuth is how a server started by `openheim serve` or `openheim mcp
// serve --http` is protected.
type serveAuth struct {
	token string
	// stored is the data directory's token when that is the one in use
	// (none was given); nil otherwise.
	stored *server.StoredToken
}

// minTokenLen is below what a given token earns a warning.
const minTokenLen = 16

// resolveServeAuth picks the token: the one given (--token or
// OPENHEIM_TOKEN), else the one kept in the data directory, made on first
// use. --insecure-no-auth turns authentication off, on a loopback address
// only. home is the data directory; what names the command in errors
// ("serve", "mcp serve").
func resolveServeAuth(ios *IOStreams, home, what, host, token string, insecure bool) (serveAuth, error) {
	loopback := server.IsLoopback(host)
	switch {
	case insecure && token != "":
		return serveAuth{}, usageErr(fmt.Errorf("%s: --insecure-no-auth with a token (--token or OPENHEIM_TOKEN)", what),
			"drop one: a token, or no authentication at all")
	case insecure && !loopback:
		return serveAuth{}, usageErr(fmt.Errorf("%s: --insecure-no-auth is refused on %q: without a token only a loopback address may be served", what, host),
			"drop --insecure-no-auth (a token is then made and required), or listen on 127.0.0.1")
	case insecure:
		fmt.Fprintln(ios.ErrOut, "openheim: WARNING: --insecure-no-auth: no token is required. Any program or user on this"+
			" machine (and any web page serve.allowed_origins allows) can run the agent's tools in work_dir with your rights.")
		return serveAuth{}, nil
	case token != "":
		if len(token) < minTokenLen {
			fmt.Fprintf(ios.ErrOut, "openheim: warning: the token is short (%d characters); whoever guesses it controls this server\n", len(token))
		}
		return serveAuth{token: token}, nil
	}
	st, err := server.LoadToken(home)
	if err != nil {
		return serveAuth{}, failure(fmt.Errorf("%s: %w", what, err))
	}
	if st.Replaced != "" {
		fmt.Fprintf(ios.ErrOut, "openheim: warning: made a new token: the old %s was not used because %s\n", st.Path, st.Replaced)
	}
	return serveAuth{token: st.Value, stored: &st}, nil
}

// describe is the access part of the "listening on" line.
func (a serveAuth) describe() string {
	switch {
	case a.token == "":
		return "NO AUTHENTICATION, --insecure-no-auth"
	case a.stored != nil && a.stored.New:
		return "token required; new token in " + a.stored.Path
	case a.stored != nil:
		return "token required; token in " + a.stored.Path
	}
	return "token required"
}
