package engine

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/llm/llmtest"
)

func TestProbeProvider(t *testing.T) {
	srv := llmtest.New()
	defer srv.Close()
	srv.ServeModels(http.StatusOK, "m1", "m2")
	resolved := func(kind, key string) *config.Resolved {
		return &config.Resolved{ProviderName: "p", APIKey: key,
			Provider: &config.Provider{Kind: kind, APIBase: srv.URL() + "?token=gw-secret", TimeoutSecs: 5}}
	}
	ctx := context.Background()
	for _, tc := range []struct {
		kind, header, value string
	}{
		{config.KindOpenAI, "Authorization", "Bearer sk-1"},
		{config.KindAnthropic, "X-Api-Key", "sk-1"},
		{config.KindGemini, "X-Goog-Api-Key", "sk-1"},
		{config.KindOpenAIResponses, "Authorization", "Bearer sk-1"},
	} {
		ids, err := ProbeProvider(ctx, resolved(tc.kind, "sk-1"))
		if err != nil || !slices.Equal(ids, []string{"m1", "m2"}) {
			t.Errorf("%s: %v, %v", tc.kind, ids, err)
		}
		req := srv.Requests()[len(srv.Requests())-1]
		if req.Method != http.MethodGet || req.Path != "/v1/models" || req.Query != "token=gw-secret" || req.Header.Get(tc.header) != tc.value {
			t.Errorf("%s: request %s %s?%s with %s=%q", tc.kind, req.Method, req.Path, req.Query, tc.header, req.Header.Get(tc.header))
		}
	}
	if len(srv.Requests()) != 4 || srv.Pending() != 0 {
		t.Errorf("probes made %d requests", len(srv.Requests()))
	}

	// A refused key is a StatusError, with the secrets masked.
	srv.ServeModels(http.StatusUnauthorized)
	_, err := ProbeProvider(ctx, resolved(config.KindOpenAI, "sk-1"))
	var se *llm.StatusError
	if !errors.As(err, &se) || se.Status != 401 || strings.Contains(err.Error(), "gw-secret") {
		t.Errorf("401: %v", err)
	}
	// Nothing listening.
	down := &config.Resolved{ProviderName: "down", Provider: &config.Provider{Kind: config.KindOpenAICompatible, APIBase: "http://127.0.0.1:1/v1", TimeoutSecs: 5}}
	if _, err := ProbeProvider(ctx, down); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("down: %v", err)
	}
	// A replay provider: its cassette.
	replay := &config.Resolved{ProviderName: "r", Provider: &config.Provider{Kind: config.KindReplay, Cassette: t.TempDir() + "/none.json"}}
	if _, err := ProbeProvider(ctx, replay); err == nil {
		t.Error("a missing cassette probed fine")
	}
}
