package commands

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/event"
	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/llm/retry"
)

func TestExplainProvider(t *testing.T) {
	cfg := &config.Config{Providers: map[string]*config.Provider{
		"openai": {Kind: config.KindOpenAI, APIBase: "https://api.openai.com/v1", EnvVar: "OPENHEIM_TEST_UNSET_KEY", TimeoutSecs: 120},
		"local":  {Kind: config.KindOpenAICompatible, APIBase: "http://127.0.0.1:1/v1", APIKey: "sk-secret", TimeoutSecs: 30},
	}}
	// A real refused connection, as net/http reports it.
	_, refused := http.Get("http://127.0.0.1:1/v1/models")
	for _, tc := range []struct {
		provider string
		err      error
		msg      string
		hint     string
	}{
		{"openai", &llm.StatusError{Status: 401, Body: "bad key"}, "provider openai (api.openai.com, key from $OPENHEIM_TEST_UNSET_KEY, which is not set): HTTP 401: bad key",
			"api.openai.com refused the key: check $OPENHEIM_TEST_UNSET_KEY (env_var of [providers.openai])"},
		{"local", fmt.Errorf("model call: %w", &llm.StatusError{Status: 403}), "provider local (127.0.0.1:1, key from api_key in the config):",
			"refused the key: check api_key in [providers.local]"},
		{"openai", &llm.StatusError{Status: 404, Body: "model not found"}, "provider openai (api.openai.com",
			`check the model ("gpt-9": default_model, models or --model) and api_base (https://api.openai.com/v1)`},
		{"local", refused, "provider local (127.0.0.1:1, ", "nothing answers at 127.0.0.1:1: check api_base (http://127.0.0.1:1/v1) in [providers.local]"},
		{"openai", &net.DNSError{Name: "api.openai.invalid", IsNotFound: true}, "", "the host api.openai.invalid is unknown: check api_base"},
		{"local", &net.OpError{Op: "read", Err: timeoutErr{}}, "", "did not answer in time: check the network and api_base, or raise timeout_secs (30)"},
		{"openai", &llm.StatusError{Status: 429}, "", "rate limiting"},
		{"openai", &llm.StatusError{Status: 503}, "", "failed on its side"},
	} {
		got, ok := explainProvider(cfg, tc.provider, "gpt-9", tc.err)
		if !ok || !strings.HasPrefix(got.Msg, tc.msg) || !strings.Contains(got.Hint, tc.hint) {
			t.Errorf("%v: %v %+v; want msg %q, hint with %q", tc.err, ok, got, tc.msg, tc.hint)
		}
		if strings.Contains(got.Msg+got.Hint, "sk-secret") {
			t.Errorf("the key leaked: %+v", got)
		}
	}
	for _, err := range []error{errors.New("saving session: disk full"), context.Canceled, nil} {
		if got, ok := explainProvider(cfg, "openai", "m", err); ok {
			t.Errorf("%v explained as %+v", err, got)
		}
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

// On a terminal a retry is one status line on stderr, drawn in place and
// cleared by the next output; elsewhere one plain line per retry.
func TestRetryStatusLine(t *testing.T) {
	var out, errOut syncBuffer
	ios := &IOStreams{Out: &out, ErrOut: &errOut, ErrTTY: true}
	o := newTurnOutput(ios, false)
	a := retry.Attempt{What: "model call", N: 1, Max: 3, Wait: 1200 * time.Millisecond, Err: &llm.StatusError{Status: 503, Body: "overloaded"}}
	o.retrying(a)
	a.N = 2
	o.retrying(a)
	o.text.Emit(textEvent("answer"))
	want := "\r\x1b[K⟳ model call failed (HTTP 503: overloaded); retrying in 1.2s (1 of 3)" +
		"\r\x1b[K⟳ model call failed (HTTP 503: overloaded); retrying in 1.2s (2 of 3)\r\x1b[K"
	if errOut.String() != want || out.String() != "answer" {
		t.Errorf("stderr %q\nwant   %q\nstdout %q", errOut.String(), want, out.String())
	}

	var plain syncBuffer
	o = newTurnOutput(&IOStreams{Out: &out, ErrOut: &plain}, true)
	o.retrying(a)
	if plain.String() != "openheim: model call failed (HTTP 503: overloaded); retrying in 1.2s (2 of 3)\n" {
		t.Errorf("plain: %q", plain.String())
	}
}

func textEvent(s string) event.Event { return event.Text("s", event.AgentMessageChunk, s) }

// A model call's retry comes through the turn's event stream (event.Retry),
// as every other fact of a turn: text output shows it as the status line
// (or a plain line off a terminal), NDJSON output as a line on stderr, and
// the NDJSON stream itself is untouched by it.
func TestRetryEventsReachTheOutput(t *testing.T) {
	ev := event.Event{Kind: event.Retry, Retry: &event.RetryInfo{Attempt: 1, MaxRetries: 3, Delay: 2 * time.Second,
		Asked: true, Err: "HTTP 429: Rate limit reached"}}
	line := "model call failed (HTTP 429: Rate limit reached); retrying in 2s as the server asked (Retry-After) (1 of 3)"

	var out, errOut syncBuffer
	o := newTurnOutput(&IOStreams{Out: &out, ErrOut: &errOut, ErrTTY: true}, false)
	o.queue.Emit(ev)
	o.queue.Close()
	if errOut.String() != "\r\x1b[K⟳ "+line || out.String() != "" {
		t.Errorf("terminal: stderr %q stdout %q", errOut.String(), out.String())
	}

	out, errOut = syncBuffer{}, syncBuffer{}
	o = newTurnOutput(&IOStreams{Out: &out, ErrOut: &errOut}, true)
	o.queue.Emit(ev)
	o.queue.Emit(textEvent("answer"))
	o.queue.Close()
	if errOut.String() != "openheim: "+line+"\n" {
		t.Errorf("json: stderr %q", errOut.String())
	}
	if strings.Contains(out.String(), "retrying") || !strings.Contains(out.String(), `"answer"`) {
		t.Errorf("json: stdout %q", out.String())
	}
}
