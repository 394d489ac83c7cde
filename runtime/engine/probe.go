package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/openheim/openheim/runtime/config"
	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/llm/anthropic"
	"github.com/openheim/openheim/runtime/llm/replay"
	"github.com/openheim/openheim/runtime/llm/transport"
)

// probeTimeout bounds one probe when the provider's own timeout is longer:
// a health check should answer quickly.
const probeTimeout = 20 * time.Second

// maxModelsList bounds the models list read (OpenRouter's is ~1 MB).
const maxModelsList = 8 << 20

// ProbeProvider checks that a provider answers with the key it would use,
// without a model call (which costs tokens): it lists the models
// (GET {api_base}/models, authenticated as the provider's wire is) and
// returns their ids. A replay provider is checked by loading its
// cassette. Errors are the wires' (an *llm.StatusError for a refusal),
// with the provider's secrets masked.
func ProbeProvider(ctx context.Context, r *config.Resolved) ([]string, error) {
	p := r.Provider
	var h http.Header
	switch p.Kind {
	case config.KindReplay:
		_, err := replay.New(p.Cassette)
		return nil, err
	case config.KindAnthropic:
		h = transport.Header("x-api-key", "", r.APIKey, map[string]string{"anthropic-version": anthropic.Version}, p.Headers)
	case config.KindGemini:
		h = transport.Header("x-goog-api-key", "", r.APIKey, nil, p.Headers)
	default:
		h = transport.Header("Authorization", "Bearer ", r.APIKey, nil, p.Headers)
	}
	timeout := min(time.Duration(p.TimeoutSecs)*time.Second, probeTimeout)
	if timeout <= 0 {
		timeout = probeTimeout
	}
	red := transport.Secrets(r.APIKey, p.APIBase, p.Headers)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, transport.Endpoint(p.APIBase, "/models", ""), nil)
	if err != nil {
		return nil, transport.Hide(err, red)
	}
	req.Header = h
	resp, err := transport.HTTPClient(timeout).Do(req)
	if err != nil {
		return nil, transport.Hide(err, red)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxModelsList))
	if err != nil {
		return nil, transport.Hide(err, red)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &llm.StatusError{Status: resp.StatusCode,
			Body: transport.Truncate(red.String(strings.TrimSpace(string(body))), transport.MaxErrorBody)}
	}
	return modelIDs(body)
}

// modelIDs reads a models list: OpenAI's and Anthropic's {"data":[{"id"}]},
// Gemini's {"models":[{"name":"models/..."}]}.
func modelIDs(body []byte) ([]string, error) {
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
		Models []struct {
			Name string `json:"name"`
		} `json:"models"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("the models list is not JSON: %w", err)
	}
	var ids []string
	for _, m := range list.Data {
		ids = append(ids, m.ID)
	}
	for _, m := range list.Models {
		ids = append(ids, strings.TrimPrefix(m.Name, "models/"))
	}
	return ids, nil
}
