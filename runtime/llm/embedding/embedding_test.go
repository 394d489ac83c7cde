package embedding

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/llm"
	"github.com/openheim/openheim/runtime/llm/llmtest"
	"github.com/openheim/openheim/runtime/llm/retry"
)

const embedKey = "sk-embed-SECRET-7373"

var embedPolicy = retry.Policy{BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond,
	Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}

func embedTexts(n int) []string {
	texts := make([]string, n)
	for i := range texts {
		texts[i] = fmt.Sprintf("memory note %d", i)
	}
	return texts
}

// embedCfg points kind ("openai" or "gemini") at srv.
func embedCfg(kind string, srv *llmtest.EmbedServer) Config {
	cfg := Config{Kind: kind, BaseURL: srv.URL(), APIKey: embedKey, Model: "text-embedding-3-small", Retry: embedPolicy}
	if kind == "gemini" {
		cfg.BaseURL = strings.TrimSuffix(srv.URL(), "/v1") + "/v1beta"
		cfg.Model = "gemini-embedding-001"
	}
	return cfg
}

func mustEmbedder(t *testing.T, cfg Config) llm.Embedder {
	t.Helper()
	e, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return e
}

func checkEmbeddings(t *testing.T, got [][]float32, texts []string, dim int) {
	t.Helper()
	if len(got) != len(texts) {
		t.Fatalf("got %d vectors for %d texts", len(got), len(texts))
	}
	for i, text := range texts {
		if want := llmtest.EmbedVector(text, dim); !reflect.DeepEqual(got[i], want) {
			t.Fatalf("vector %d is not the one for %q:\n got %v\nwant %v", i, text, got[i], want)
		}
	}
}

func TestEmbedOpenAIWire(t *testing.T) {
	srv := llmtest.NewEmbedServer()
	defer srv.Close()
	cfg := embedCfg("openai_compatible", srv)
	cfg.Headers = map[string]string{"X-Gateway": "g1"}
	texts := embedTexts(5)
	got, err := mustEmbedder(t, cfg).Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	checkEmbeddings(t, got, texts, 8) // the server lists data[] reversed
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Path != "/v1/embeddings" || r.Header.Get("Authorization") != "Bearer "+embedKey || r.Header.Get("X-Gateway") != "g1" {
		t.Errorf("path %q, headers %v", r.Path, r.Header)
	}
	if r.Body["model"] != "text-embedding-3-small" || r.Body["encoding_format"] != "float" {
		t.Errorf("body %s", r.Raw)
	}
	if in, _ := r.Body["input"].([]any); len(in) != 5 || in[0] != texts[0] || in[4] != texts[4] {
		t.Errorf("input %v", r.Body["input"])
	}

	// No key: no Authorization header at all.
	cfg.APIKey = ""
	if _, err := mustEmbedder(t, cfg).Embed(context.Background(), texts[:1]); err != nil {
		t.Fatal(err)
	}
	if h := srv.Requests()[1].Header; h.Get("Authorization") != "" {
		t.Errorf("Authorization sent without a key: %q", h.Get("Authorization"))
	}
}

func TestEmbedGeminiWire(t *testing.T) {
	srv := llmtest.NewEmbedServer()
	defer srv.Close()
	srv.Dim = 16
	for _, model := range []string{"gemini-embedding-001", "models/gemini-embedding-001"} {
		cfg := embedCfg("gemini", srv)
		cfg.Model = model
		texts := embedTexts(3)
		got, err := mustEmbedder(t, cfg).Embed(context.Background(), texts)
		if err != nil {
			t.Fatal(err)
		}
		checkEmbeddings(t, got, texts, 16)
	}
	for _, r := range srv.Requests() {
		if r.Path != "/v1beta/models/gemini-embedding-001:batchEmbedContents" {
			t.Errorf("path %q", r.Path)
		}
		if r.Header.Get("x-goog-api-key") != embedKey || r.Header.Get("Authorization") != "" {
			t.Errorf("auth headers %v", r.Header)
		}
		reqs, _ := r.Body["requests"].([]any)
		first, _ := reqs[0].(map[string]any)
		if len(reqs) != 3 || first["model"] != "models/gemini-embedding-001" {
			t.Errorf("body %s", r.Raw)
		}
	}
}

// TestEmbedGeminiKeyNotInURL looks at the raw request line.
func TestEmbedGeminiKeyNotInURL(t *testing.T) {
	var uri atomic.Value
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		uri.Store(r.RequestURI)
		io.WriteString(w, `{"embeddings":[{"values":[1,2]}]}`)
	}))
	defer ts.Close()
	e := mustEmbedder(t, Config{Kind: "gemini", BaseURL: ts.URL, APIKey: embedKey, Model: "m", Retry: embedPolicy})
	if _, err := e.Embed(context.Background(), []string{"a"}); err != nil {
		t.Fatal(err)
	}
	if u := uri.Load().(string); u != "/models/m:batchEmbedContents" {
		t.Errorf("request URI %q", u)
	}
}

func TestEmbedBatching(t *testing.T) {
	tests := []struct {
		kind      string
		n, batch  int
		wantSizes []int
	}{
		{"openai", 250, 100, []int{100, 100, 50}},
		{"gemini", 250, 100, []int{100, 100, 50}},
		{"openai", 200, 0, []int{96, 96, 8}},   // default
		{"gemini", 201, 0, []int{100, 100, 1}}, // default
		{"gemini", 150, 500, []int{100, 50}},   // capped at the API's limit
		{"openai", 7, 7, []int{7}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%d/%d", tt.kind, tt.n, tt.batch), func(t *testing.T) {
			srv := llmtest.NewEmbedServer()
			defer srv.Close()
			cfg := embedCfg(tt.kind, srv)
			cfg.BatchSize = tt.batch
			texts := embedTexts(tt.n)
			got, err := mustEmbedder(t, cfg).Embed(context.Background(), texts)
			if err != nil {
				t.Fatal(err)
			}
			checkEmbeddings(t, got, texts, 8)
			var sizes []int
			for _, r := range srv.Requests() {
				key := "input"
				if tt.kind == "gemini" {
					key = "requests"
				}
				items, _ := r.Body[key].([]any)
				sizes = append(sizes, len(items))
			}
			if !reflect.DeepEqual(sizes, tt.wantSizes) {
				t.Errorf("batch sizes %v, want %v", sizes, tt.wantSizes)
			}
		})
	}
}

func TestEmbedEmptyInput(t *testing.T) {
	srv := llmtest.NewEmbedServer()
	defer srv.Close()
	for _, kind := range []string{"openai", "gemini"} {
		e := mustEmbedder(t, embedCfg(kind, srv))
		for _, in := range [][]string{nil, {}} {
			got, err := e.Embed(context.Background(), in)
			if err != nil || got == nil || len(got) != 0 {
				t.Errorf("%s: Embed(%v) = %v, %v; want an empty result", kind, in, got, err)
			}
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests for empty input", n)
	}
}

func TestEmbedRefusedKinds(t *testing.T) {
	for _, kind := range []string{"anthropic", "Anthropic", "cohere", ""} {
		_, err := New(Config{Kind: kind, Model: "m", APIKey: embedKey})
		if !errors.Is(err, ErrNoAPI) {
			t.Fatalf("kind %q: err %v, want ErrNoAPI", kind, err)
		}
		msg := err.Error()
		if !strings.Contains(msg, fmt.Sprintf("%q", kind)) || !strings.Contains(msg, "memory.embedding_provider") {
			t.Errorf("kind %q: unclear error %q", kind, msg)
		}
	}
	_, err := New(Config{Kind: "anthropic"})
	if want := `provider kind "anthropic" has no embeddings API; set memory.embedding_provider to an OpenAI-compatible or Gemini provider`; !strings.Contains(err.Error(), want) {
		t.Errorf("err %q", err)
	}
	if _, err := New(Config{Kind: "openai"}); err == nil || !strings.Contains(err.Error(), "no model") {
		t.Errorf("missing model: err %v", err)
	}
}

func TestEmbedRetry(t *testing.T) {
	for _, kind := range []string{"openai", "gemini"} {
		t.Run(kind+"/429 then success", func(t *testing.T) {
			srv := llmtest.NewEmbedServer()
			defer srv.Close()
			srv.FailNext(http.StatusTooManyRequests, "0.2")
			cfg := embedCfg(kind, srv)
			cfg.Retry.MaxDelay = time.Second // let Retry-After through
			texts := embedTexts(3)
			start := time.Now()
			got, err := mustEmbedder(t, cfg).Embed(context.Background(), texts)
			if err != nil {
				t.Fatal(err)
			}
			checkEmbeddings(t, got, texts, 8)
			if n := len(srv.Requests()); n != 2 {
				t.Errorf("%d requests, want 2", n)
			}
			if d := time.Since(start); d < 200*time.Millisecond {
				t.Errorf("retried after %v, before Retry-After", d)
			}
		})
		t.Run(kind+"/500 gives up", func(t *testing.T) {
			srv := llmtest.NewEmbedServer()
			defer srv.Close()
			for range 3 {
				srv.FailNext(http.StatusInternalServerError, "")
			}
			cfg := embedCfg(kind, srv)
			cfg.Retry.MaxRetries = 2
			_, err := mustEmbedder(t, cfg).Embed(context.Background(), embedTexts(3))
			var se *llm.StatusError
			if !errors.As(err, &se) || se.Status != 500 {
				t.Fatalf("err %v, want a 500 StatusError", err)
			}
			if n := len(srv.Requests()); n != 3 {
				t.Errorf("%d requests, want 3 (MaxRetries+1)", n)
			}
		})
		t.Run(kind+"/second batch retried alone", func(t *testing.T) {
			srv := llmtest.NewEmbedServer()
			defer srv.Close()
			cfg := embedCfg(kind, srv)
			cfg.BatchSize = 2
			e := mustEmbedder(t, cfg)
			texts := embedTexts(4)
			if _, err := e.Embed(context.Background(), texts[:2]); err != nil {
				t.Fatal(err)
			}
			srv.FailNext(http.StatusServiceUnavailable, "") // hits the next request
			got, err := e.Embed(context.Background(), texts)
			if err != nil {
				t.Fatal(err)
			}
			checkEmbeddings(t, got, texts, 8)
			if n := len(srv.Requests()); n != 4 { // 1 + (503, retry, batch 2)
				t.Errorf("%d requests, want 4", n)
			}
		})
		t.Run(kind+"/400 not retried", func(t *testing.T) {
			srv := llmtest.NewEmbedServer()
			defer srv.Close()
			srv.FailNext(http.StatusBadRequest, "")
			_, err := mustEmbedder(t, embedCfg(kind, srv)).Embed(context.Background(), embedTexts(1))
			var se *llm.StatusError
			if !errors.As(err, &se) || se.Status != 400 || len(srv.Requests()) != 1 {
				t.Errorf("err %v after %d requests", err, len(srv.Requests()))
			}
		})
	}
}

// badServer answers every request with body(n), n counting from 1.

func TestEmbedBaseQuery(t *testing.T) {
	srv := llmtest.NewEmbedServer()
	defer srv.Close()
	for _, c := range []struct{ kind, base, path string }{
		{"openai_compatible", srv.URL() + "?token=qtok-embed-1234", "/v1/embeddings"},
		{"gemini", strings.TrimSuffix(srv.URL(), "/v1") + "/v1beta?token=qtok-embed-1234", "/v1beta/models/m:batchEmbedContents"},
	} {
		e, err := New(Config{Kind: c.kind, BaseURL: c.base, Model: "m", APIKey: "k"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Embed(context.Background(), []string{"a"}); err != nil {
			t.Fatalf("%s: %v", c.kind, err)
		}
		reqs := srv.Requests()
		got := reqs[len(reqs)-1]
		if got.Path != c.path || got.Query != "token=qtok-embed-1234" {
			t.Errorf("%s: request went to %s?%s", c.kind, got.Path, got.Query)
		}
	}
}
