package mcp

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/redact"
)

// TestFailingServerQuotingItsSecrets: a stdio server that prints its args
// and environment to stderr and exits. Its status error (what
// /api/mcp-servers, initialize._meta, `mcp ls` and prompt --json show), the
// warning and the relayed stderr log lines hold none of its secret args and
// env values, nor the config-wide secret it inherited (Options.Redact).
func TestFailingServerQuotingItsSecrets(t *testing.T) {
	secrets := []string{"arg-flag-secret1", "arg-next-secret2", "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
		"env-secret-value3", "provider-key-secret4"}
	s := stdioServer(t, "args", map[string]string{"TEST_TOKEN": secrets[3], "TEST_INHERITED": secrets[4]})
	s.Args = []string{"--token=" + secrets[0], "--api-key", secrets[1], secrets[2], "--verbose"}
	logs := &syncBuffer{}
	w := &warnings{}
	opts := Options{Redact: redact.New(secrets[4])}
	m := newManagerOpts(t, map[string]*config.MCPServer{"quoting": s}, w, logs, opts)
	m.Start(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m.Wait(ctx)
	st := m.Status()[0]
	if st.Connected || st.Error == nil || !strings.Contains(*st.Error, "--verbose") || !strings.Contains(*st.Error, redact.Marker) {
		t.Fatalf("status: %+v (%s)", st, deref(st.Error))
	}
	m.Close()
	all := *st.Error + "\n" + strings.Join(w.get(), "\n") + "\n" + logs.String()
	if !strings.Contains(logs.String(), "mcp server stderr") {
		t.Fatalf("no relayed stderr in the log: %s", logs.String())
	}
	for _, sec := range secrets {
		if strings.Contains(all, sec) {
			t.Errorf("%q shown:\n%s", sec, all)
		}
	}
}
