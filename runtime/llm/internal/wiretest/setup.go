package wiretest

import (
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/llm/llmtest"
	"github.com/openheim/openheim/runtime/llm/transport"
)

// Fake starts the fake server (it speaks every wire) with replies; it is
// closed when the test ends.
func Fake(t *testing.T, replies ...llmtest.Reply) *llmtest.Server {
	t.Helper()
	srv := llmtest.New()
	t.Cleanup(srv.Close)
	srv.Enqueue(replies...)
	return srv
}

// Setup starts the fake server with replies and a client of it made by
// newClient: cfg with the server's base URL (…/v1) and, unless cfg sets
// one, a 5 s timeout.
func Setup(t *testing.T, cfg transport.Config, newClient func(transport.Config) llm.Provider, replies ...llmtest.Reply) (*llmtest.Server, llm.Provider) {
	t.Helper()
	srv := Fake(t, replies...)
	cfg.BaseURL = srv.URL()
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	return srv, newClient(cfg)
}
