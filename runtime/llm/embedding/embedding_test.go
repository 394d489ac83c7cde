package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openheim/openheim/runtime/llm/llmtest"
)

const embedKey = "sk-embed-SECRET-7373"

var embedPolicy = RetryPolicy{BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond,
	Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}

func embedTexts(n int) []string {
	texts := make([]string, n)
	for i := range texts {
		texts[i] = fmt.Sprintf("memory note %d", i)
	}
	return texts
}

// embedCfg points kind ("openai" or "gemini") at srv.
func embedCfg(kind string, srv *llmtest.EmbedServer) EmbedConfig {
	cfg := EmbedConfig{Kind: kind, BaseURL: srv.URL(), APIKey: embedKey, Model: "text-embedding-3-small", Retry: embedPolicy}
	if kind == "gemini" {
		cfg.BaseURL = strings.TrimSuffix(srv.URL(), "/v1") + "/v1beta"
		cfg.Model = "gemini-embedding-001"
	}
	return cfg
}

func mustEmbedder(t *testing.T, cfg EmbedConfig) Embedder {
	t.Helper()
	e, err := NewEmbedder(cfg)
	if err != nil {
		t.Fatalf("NewEmbedder: %v", err)
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
	e := mustEmbedder(t, EmbedConfig{Kind: "gemini", BaseURL: ts.URL, APIKey: embedKey, Model: "m", Retry: embedPolicy})
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
		_, err := NewEmbedder(EmbedConfig{Kind: kind, Model: "m", APIKey: embedKey})
		if !errors.Is(err, ErrNoEmbeddingAPI) {
			t.Fatalf("kind %q: err %v, want ErrNoEmbeddingAPI", kind, err)
		}
		msg := err.Error()
		if !strings.Contains(msg, fmt.Sprintf("%q", kind)) || !strings.Contains(msg, "memory.embedding_provider") {
			t.Errorf("kind %q: unclear error %q", kind, msg)
		}
	}
	_, err := NewEmbedder(EmbedConfig{Kind: "anthropic"})
	if want := `provider kind "anthropic" has no embeddings API; set memory.embedding_provider to an OpenAI-compatible or Gemini provider`; !strings.Contains(err.Error(), want) {
		t.Errorf("err %q", err)
	}
	if _, err := NewEmbedder(EmbedConfig{Kind: "openai"}); err == nil || !strings.Contains(err.Error(), "no model") {
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
			var se *StatusError
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
			var se *StatusError
			if !errors.As(err, &se) || se.Status != 400 || len(srv.Requests()) != 1 {
				t.Errorf("err %v after %d requests", err, len(srv.Requests()))
			}
		})
	}
}

// badServer answers every request with body(n), n counting from 1.
func badServer(t *testing.T, status int, body func(n int) string) (*httptest.Server, *atomic.Int32) {
	var calls atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(calls.Add(1))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body(n))
	}))
	t.Cleanup(ts.Close)
	return ts, &calls
}

func TestEmbedBadResponses(t *testing.T) {
	oa := func(items ...string) string { return `{"data":[` + strings.Join(items, ",") + `]}` }
	tests := []struct {
		name, kind string
		texts      int
		batch      int
		body       func(n int) string
		want       string
	}{
		{"too few", "openai", 2, 0, func(int) string { return oa(`{"index":0,"embedding":[1,2]}`) }, "1 vectors for 2 texts"},
		{"missing index", "openai", 2, 0, func(int) string {
			return oa(`{"index":0,"embedding":[1,2]}`, `{"embedding":[3,4]}`)
		}, "data[1] without an index"},
		{"duplicate index", "openai", 2, 0, func(int) string {
			return oa(`{"index":1,"embedding":[1,2]}`, `{"index":1,"embedding":[3,4]}`)
		}, "index 1 twice"},
		{"index out of range", "openai", 2, 0, func(int) string {
			return oa(`{"index":0,"embedding":[1,2]}`, `{"index":2,"embedding":[3,4]}`)
		}, "index 2, out of range"},
		{"dim mismatch", "openai", 2, 0, func(int) string {
			return oa(`{"index":0,"embedding":[1,2]}`, `{"index":1,"embedding":[3,4,5]}`)
		}, "mismatched dimensions (2 and 3)"},
		{"dim mismatch across batches", "openai", 2, 1, func(n int) string {
			return oa(`{"index":0,"embedding":[` + strings.Repeat("1,", n) + `1]}`)
		}, "mismatched dimensions (2 and 3)"},
		{"empty vector", "openai", 1, 0, func(int) string { return oa(`{"index":0,"embedding":[]}`) }, "empty vector"},
		{"base64", "openai", 1, 0, func(int) string { return oa(`{"index":0,"embedding":"AACAPw=="}`) }, "decoding the response"},
		{"error in 200", "openai", 1, 0, func(int) string { return `{"error":{"message":"model not loaded"}}` }, "model not loaded"},
		{"not JSON", "openai", 1, 0, func(int) string { return `<html>gateway</html>` }, "decoding the response"},
		{"gemini too many", "gemini", 1, 0, func(int) string { return `{"embeddings":[{"values":[1]},{"values":[2]}]}` }, "2 vectors for 1 texts"},
		{"gemini dim mismatch", "gemini", 2, 0, func(int) string { return `{"embeddings":[{"values":[1]},{"values":[2,3]}]}` }, "mismatched dimensions"},
		{"gemini no values", "gemini", 1, 0, func(int) string { return `{"embeddings":[{}]}` }, "empty vector"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, calls := badServer(t, 200, tt.body)
			cfg := EmbedConfig{Kind: tt.kind, BaseURL: ts.URL, APIKey: embedKey, Model: "m", BatchSize: tt.batch, Retry: embedPolicy}
			got, err := mustEmbedder(t, cfg).Embed(context.Background(), embedTexts(tt.texts))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, %v; want an error containing %q", got, err, tt.want)
			}
			if Retryable(err) {
				t.Errorf("bad response %v is retryable", err)
			}
			want := 1 // not retried
			if tt.batch > 0 {
				want = tt.texts / tt.batch
			}
			if int(calls.Load()) != want {
				t.Errorf("%d requests, want %d", calls.Load(), want)
			}
		})
	}
}

func TestEmbedKeyNeverInErrors(t *testing.T) {
	echo := func(status int) *httptest.Server {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			key := r.Header.Get("x-goog-api-key") + strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
			w.WriteHeader(status)
			fmt.Fprintf(w, `{"error":{"message":"invalid key %s"}}`, key)
		}))
		t.Cleanup(ts.Close)
		return ts
	}
	for _, kind := range []string{"openai", "gemini"} {
		for _, status := range []int{401, 500, 200} {
			ts := echo(status)
			cfg := EmbedConfig{Kind: kind, BaseURL: ts.URL, APIKey: embedKey, Model: "m", Retry: embedPolicy}
			_, err := mustEmbedder(t, cfg).Embed(context.Background(), []string{"x"})
			if err == nil || strings.Contains(err.Error(), embedKey) {
				t.Errorf("%s/%d: err %v", kind, status, err)
			}
		}
		// A key pasted into the base URL does not leak through a
		// transport error either.
		cfg := EmbedConfig{Kind: kind, BaseURL: "http://127.0.0.1:1/" + embedKey, APIKey: embedKey, Model: "m",
			Retry: RetryPolicy{MaxRetries: -1}}
		_, err := mustEmbedder(t, cfg).Embed(context.Background(), []string{"x"})
		if err == nil || strings.Contains(err.Error(), embedKey) || !Retryable(err) {
			t.Errorf("%s connection refused: err %v", kind, err)
		}
	}
}

// hangServer never answers until the client goes away or the test ends.
func hangServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var calls atomic.Int32
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(release) }) // runs first
	return ts, &calls
}

func TestEmbedCancel(t *testing.T) {
	t.Run("before the call", func(t *testing.T) {
		srv := llmtest.NewEmbedServer()
		defer srv.Close()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := mustEmbedder(t, embedCfg("openai", srv)).Embed(ctx, embedTexts(2))
		if !errors.Is(err, context.Canceled) || len(srv.Requests()) != 0 {
			t.Errorf("err %v after %d requests", err, len(srv.Requests()))
		}
	})
	t.Run("while waiting to retry", func(t *testing.T) {
		srv := llmtest.NewEmbedServer()
		defer srv.Close()
		srv.FailNext(http.StatusServiceUnavailable, "30")
		cfg := embedCfg("gemini", srv)
		cfg.Retry.MaxDelay = time.Minute
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := mustEmbedder(t, cfg).Embed(ctx, embedTexts(2))
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
			t.Errorf("err %v after %v", err, time.Since(start))
		}
		if n := len(srv.Requests()); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
	})
	t.Run("during a request", func(t *testing.T) {
		ts, calls := hangServer(t)
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		e := mustEmbedder(t, EmbedConfig{Kind: "openai", BaseURL: ts.URL, Model: "m", Retry: embedPolicy})
		_, err := e.Embed(ctx, embedTexts(2))
		if !errors.Is(err, context.Canceled) || Retryable(err) || calls.Load() != 1 {
			t.Errorf("err %v after %d requests", err, calls.Load())
		}
	})
}

func TestEmbedTimeoutRetried(t *testing.T) {
	ts, calls := hangServer(t)
	cfg := EmbedConfig{Kind: "gemini", BaseURL: ts.URL, Model: "m", Timeout: 50 * time.Millisecond, Retry: embedPolicy}
	cfg.Retry.MaxRetries = 1
	_, err := mustEmbedder(t, cfg).Embed(context.Background(), embedTexts(1))
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || !Retryable(err) {
		t.Fatalf("err %v, want a timeout", err)
	}
	if calls.Load() != 2 {
		t.Errorf("%d requests, want 2", calls.Load())
	}
}

// TestEmbedServerRejects keeps the fake honest about what real APIs refuse.
func TestEmbedServerRejects(t *testing.T) {
	srv := llmtest.NewEmbedServer()
	defer srv.Close()
	post := func(path, body string) int {
		resp, err := http.Post(strings.TrimSuffix(srv.URL(), "/v1")+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	bad := map[string]string{
		"/v1/embeddings":                      `{"model":"m","input":["a"],"encoding_format":"base64"}`,
		"/v1beta/models/a:batchEmbedContents": `{"requests":[{"model":"models/b","content":{"parts":[{"text":"x"}]}}]}`,
		"/v1/chat/completions":                `{}`,
	}
	for path, body := range bad {
		if code := post(path, body); code < 400 {
			t.Errorf("%s %s: HTTP %d", path, body, code)
		}
	}
	var one struct {
		Data []struct{ Embedding []float32 }
	}
	resp, err := http.Post(srv.URL()+"/embeddings", "application/json", strings.NewReader(`{"model":"m","input":"solo"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&one); err != nil || len(one.Data) != 1 ||
		!reflect.DeepEqual(one.Data[0].Embedding, llmtest.EmbedVector("solo", 8)) {
		t.Errorf("string input: %v %v", one, err)
	}
}
