package embedding

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
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
			cfg := Config{Kind: tt.kind, BaseURL: ts.URL, APIKey: embedKey, Model: "m", BatchSize: tt.batch, Retry: embedPolicy}
			got, err := mustEmbedder(t, cfg).Embed(context.Background(), embedTexts(tt.texts))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, %v; want an error containing %q", got, err, tt.want)
			}
			if llm.Retryable(err) {
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
			cfg := Config{Kind: kind, BaseURL: ts.URL, APIKey: embedKey, Model: "m", Retry: embedPolicy}
			_, err := mustEmbedder(t, cfg).Embed(context.Background(), []string{"x"})
			if err == nil || strings.Contains(err.Error(), embedKey) {
				t.Errorf("%s/%d: err %v", kind, status, err)
			}
		}
		// A key pasted into the base URL does not leak through a
		// transport error either.
		cfg := Config{Kind: kind, BaseURL: "http://127.0.0.1:1/" + embedKey, APIKey: embedKey, Model: "m",
			Retry: retry.Policy{MaxRetries: -1}}
		_, err := mustEmbedder(t, cfg).Embed(context.Background(), []string{"x"})
		if err == nil || strings.Contains(err.Error(), embedKey) || !llm.Retryable(err) {
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
		// Long enough for the first request to be answered (and so the
		// wait of 30 s to begin) on a loaded machine.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
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
		go func() { // once the server has the request, not at a guessed time
			for calls.Load() == 0 && ctx.Err() == nil {
				time.Sleep(time.Millisecond)
			}
			cancel()
		}()
		defer cancel()
		e := mustEmbedder(t, Config{Kind: "openai", BaseURL: ts.URL, Model: "m", Retry: embedPolicy})
		_, err := e.Embed(ctx, embedTexts(2))
		if !errors.Is(err, context.Canceled) || llm.Retryable(err) || calls.Load() != 1 {
			t.Errorf("err %v after %d requests", err, calls.Load())
		}
	})
}

func TestEmbedTimeoutRetried(t *testing.T) {
	ts, calls := hangServer(t)
	// Each attempt must reach the server before its timeout: 50ms was
	// tight for a loaded machine under -race.
	cfg := Config{Kind: "gemini", BaseURL: ts.URL, Model: "m", Timeout: 500 * time.Millisecond, Retry: embedPolicy}
	cfg.Retry.MaxRetries = 1
	_, err := mustEmbedder(t, cfg).Embed(context.Background(), embedTexts(1))
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || !llm.Retryable(err) {
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
