package commands

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"syscall"

	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/llm"
)

// A failed model call, explained as help rather than as a stack: which
// provider, which host, where the key came from, and the likely fix.

// providerTrouble is a provider failure worded for a person.
type providerTrouble struct {
	Msg  string // "provider openai (api.openai.com, key from $OPENAI_API_KEY): HTTP 401: ..."
	Hint string // the likely fix
}

// explainProvider words err, a failure of a call to the provider named
// (with model), when it is one a user can act on; ok is false for other
// errors (a tool's, the session store's).
func explainProvider(cfg *config.Config, provider, model string, err error) (providerTrouble, bool) {
	if err == nil || errors.Is(err, context.Canceled) {
		return providerTrouble{}, false
	}
	p := cfg.Providers[provider]
	if p == nil {
		return providerTrouble{}, false
	}
	host := hostOf(p.APIBase)
	where := fmt.Sprintf("provider %s (%s, key %s)", provider, host, keyOrigin(p))
	if p.Kind == config.KindReplay {
		where = fmt.Sprintf("provider %s (replay of %s)", provider, p.Cassette)
	}
	t := providerTrouble{Msg: where + ": " + err.Error()}
	var se *llm.StatusError
	var dns *net.DNSError
	var ne net.Error
	switch {
	case errors.As(err, &se) && (se.Status == http.StatusUnauthorized || se.Status == http.StatusForbidden):
		t.Hint = fmt.Sprintf("%s refused the key: check %s", host, keyFix(provider, p))
	case errors.As(err, &se) && se.Status == http.StatusNotFound:
		t.Hint = fmt.Sprintf("%s does not know the model or the path: check the model (%q: default_model, models or --model) and api_base (%s) in [providers.%s]",
			host, model, p.APIBase, provider)
	case errors.As(err, &se) && se.Status == http.StatusTooManyRequests:
		t.Hint = "the provider is rate limiting this key: wait a little, or check the account's quota"
	case errors.As(err, &se) && se.Status >= 500:
		t.Hint = "the provider failed on its side (retried already): try again later"
	case errors.As(err, &se) && se.Status == http.StatusBadRequest:
		t.Hint = fmt.Sprintf("the provider refused the request: check the model (%q) and the [providers.%s] settings (max_tokens, thinking)", model, provider)
	case errors.Is(err, syscall.ECONNREFUSED):
		t.Hint = fmt.Sprintf("nothing answers at %s: check api_base (%s) in [providers.%s], and that the server runs", host, p.APIBase, provider)
	case errors.As(err, &dns):
		t.Hint = fmt.Sprintf("the host %s is unknown: check api_base (%s) in [providers.%s] and the network", dns.Name, p.APIBase, provider)
	case errors.As(err, &ne) && ne.Timeout():
		t.Hint = fmt.Sprintf("%s did not answer in time: check the network and api_base, or raise timeout_secs (%d) in [providers.%s]", host, p.TimeoutSecs, provider)
	case errors.Is(err, llm.ErrStreamCut):
		t.Hint = "the connection dropped mid-answer (retried already): try again; a proxy may be cutting long streams"
	default:
		return providerTrouble{}, false
	}
	return t, true
}

// hostOf is the host (and port) of an API base URL, without credentials.
func hostOf(base string) string {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return "its api_base"
	}
	return u.Host
}

// keyOrigin says where the provider's key comes from, never the key.
func keyOrigin(p *config.Provider) string {
	switch {
	case p.APIKey != "":
		return "from api_key in the config"
	case p.EnvVar == "":
		return "none"
	case os.Getenv(p.EnvVar) == "":
		return "from $" + p.EnvVar + ", which is not set"
	}
	return "from $" + p.EnvVar
}

// keyFix is where to put the right key.
func keyFix(provider string, p *config.Provider) string {
	if p.APIKey != "" {
		return fmt.Sprintf("api_key in [providers.%s] (it wins over env_var)", provider)
	}
	if p.EnvVar != "" {
		return fmt.Sprintf("$%s (env_var of [providers.%s])", p.EnvVar, provider)
	}
	return fmt.Sprintf("api_key or env_var in [providers.%s]", provider)
}
