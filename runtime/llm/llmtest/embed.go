package llmtest

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
)

// EmbedServer is a fake embeddings endpoint on 127.0.0.1. It serves
//
//	POST {URL()}/embeddings                                  (OpenAI wire)
//	POST {base}/v1beta/models/{model}:batchEmbedContents     (Gemini wire)
//
// where base is strings.TrimSuffix(URL(), "/v1"). Each text gets
// EmbedVector(text, Dim), so a test can check which vector went where.
// OpenAI answers list data[] in reversed order (each with its right index)
// so that clients relying on array order fail. Its methods are safe for
// concurrent use.
type EmbedServer struct {
	// Dim is the length of the vectors served; default 8. Set it before
	// sending requests.
	Dim int

	ts    *httptest.Server
	mu    sync.Mutex
	reqs  []RecordedRequest
	fails []embedFailure
}

type embedFailure struct {
	status     int
	retryAfter string
}

// NewEmbedServer starts an EmbedServer.
func NewEmbedServer() *EmbedServer {
	s := &EmbedServer{Dim: 8}
	s.ts = httptest.NewServer(http.HandlerFunc(s.handle))
	return s
}

// URL is the OpenAI-style base URL; it ends in /v1.
func (s *EmbedServer) URL() string { return s.ts.URL + "/v1" }

// Close stops the server.
func (s *EmbedServer) Close() {
	s.ts.CloseClientConnections()
	s.ts.Close()
}

// Requests returns the requests received so far, in order, failed ones
// included.
func (s *EmbedServer) Requests() []RecordedRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]RecordedRequest(nil), s.reqs...)
}

// FailNext makes the next embeddings request fail with status, sending a
// Retry-After header when retryAfter is not empty. Calls queue up: each
// request consumes one failure.
func (s *EmbedServer) FailNext(status int, retryAfter string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fails = append(s.fails, embedFailure{status: status, retryAfter: retryAfter})
}

// EmbedVector is the vector the server returns for text: dim floats seeded
// by a hash of text, scaled to unit length.
func EmbedVector(text string, dim int) []float32 {
	h := fnv.New64a()
	_, _ = io.WriteString(h, text)
	seed := h.Sum64()
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	v := make([]float32, dim)
	var norm float64
	for i := range v {
		x := r.Float64()*2 - 1
		v[i] = float32(x)
		norm += x * x
	}
	if norm = math.Sqrt(norm); norm > 0 {
		for i := range v {
			v[i] = float32(float64(v[i]) / norm)
		}
	}
	return v
}

func (s *EmbedServer) handle(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	rec := RecordedRequest{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Raw: raw}
	_ = json.Unmarshal(raw, &rec.Body)

	s.mu.Lock()
	s.reqs = append(s.reqs, rec)
	dim := s.Dim
	var fail *embedFailure
	if len(s.fails) > 0 {
		fail = &s.fails[0]
		s.fails = s.fails[1:]
	}
	s.mu.Unlock()
	if dim <= 0 {
		dim = 8
	}

	gemini := strings.HasSuffix(r.URL.Path, ":batchEmbedContents") && strings.Contains(r.URL.Path, "/models/")
	if r.Method != http.MethodPost || !(gemini || strings.HasSuffix(r.URL.Path, "/embeddings")) {
		embedError(w, gemini, http.StatusNotFound, "llmtest: only POST .../embeddings and .../models/{model}:batchEmbedContents are served, got "+r.Method+" "+r.URL.Path)
		return
	}
	if fail != nil {
		if fail.retryAfter != "" {
			w.Header().Set("Retry-After", fail.retryAfter)
		}
		embedError(w, gemini, fail.status, "llmtest: injected HTTP "+strconv.Itoa(fail.status))
		return
	}
	if gemini {
		s.gemini(w, r.URL.Path, raw, dim)
	} else {
		s.openAI(w, raw, dim)
	}
}

func (s *EmbedServer) openAI(w http.ResponseWriter, raw []byte, dim int) {
	var req struct {
		Model          string          `json:"model"`
		Input          json.RawMessage `json:"input"`
		EncodingFormat string          `json:"encoding_format"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		embedError(w, false, http.StatusBadRequest, "llmtest: bad JSON: "+err.Error())
		return
	}
	var texts []string
	if err := json.Unmarshal(req.Input, &texts); err != nil {
		var one string
		if json.Unmarshal(req.Input, &one) != nil {
			embedError(w, false, http.StatusBadRequest, "llmtest: input must be a string or an array of strings")
			return
		}
		texts = []string{one}
	}
	switch {
	case req.Model == "":
		embedError(w, false, http.StatusBadRequest, "llmtest: model is required")
		return
	case req.EncodingFormat != "" && req.EncodingFormat != "float":
		embedError(w, false, http.StatusBadRequest, "llmtest: only encoding_format float is served")
		return
	case len(texts) == 0 || len(texts) > 2048:
		embedError(w, false, http.StatusBadRequest, fmt.Sprintf("llmtest: input has %d items, want 1 to 2048", len(texts)))
		return
	}
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	data := make([]item, 0, len(texts))
	for i := len(texts) - 1; i >= 0; i-- { // reversed on purpose
		data = append(data, item{Object: "embedding", Index: i, Embedding: EmbedVector(texts[i], dim)})
	}
	embedJSON(w, map[string]any{
		"object": "list",
		"data":   data,
		"model":  req.Model,
		"usage":  map[string]int{"prompt_tokens": len(texts), "total_tokens": len(texts)},
	})
}

func (s *EmbedServer) gemini(w http.ResponseWriter, path string, raw []byte, dim int) {
	model := path[strings.LastIndex(path, "/models/")+len("/models/") : len(path)-len(":batchEmbedContents")]
	var req struct {
		Requests []struct {
			Model   string `json:"model"`
			Content struct {
				Parts []struct {
					Text string `json:"text"`
				} `json:"parts"`
			} `json:"content"`
		} `json:"requests"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		embedError(w, true, http.StatusBadRequest, "llmtest: bad JSON: "+err.Error())
		return
	}
	if n := len(req.Requests); n == 0 || n > 100 {
		embedError(w, true, http.StatusBadRequest, fmt.Sprintf("llmtest: %d requests in the batch, want 1 to 100", n))
		return
	}
	type embedding struct {
		Values []float32 `json:"values"`
	}
	out := make([]embedding, len(req.Requests))
	for i, rq := range req.Requests {
		if rq.Model != "models/"+model {
			embedError(w, true, http.StatusBadRequest, fmt.Sprintf("llmtest: requests[%d].model is %q, the path names models/%s", i, rq.Model, model))
			return
		}
		var text strings.Builder
		for _, p := range rq.Content.Parts {
			text.WriteString(p.Text)
		}
		out[i] = embedding{Values: EmbedVector(text.String(), dim)}
	}
	embedJSON(w, map[string]any{"embeddings": out})
}

func embedJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// embedError writes each API's own error object.
func embedError(w http.ResponseWriter, gemini bool, status int, msg string) {
	var body any = map[string]any{"error": map[string]any{"message": msg, "type": "llmtest"}}
	if gemini {
		body = map[string]any{"error": map[string]any{"code": status, "message": msg, "status": "UNKNOWN"}}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}
