package embedding

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/openheim/openheim/runtime/llm/transport"
)

// openAIAPI is the OpenAI API root used when Config.BaseURL is empty, and
// its Bearer token.
var openAIAPI = transport.API{BaseURL: "https://api.openai.com/v1", KeyHeader: "Authorization", KeyPrefix: "Bearer "}

// oaEmbedRequest is the body of POST {BaseURL}/embeddings.
type oaEmbedRequest struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
	// EncodingFormat is always "float": some clients default to base64,
	// and saying it keeps compatible servers from guessing.
	EncodingFormat string `json:"encoding_format"`
}

type oaEmbedResponse struct {
	Data []struct {
		// Index is a pointer so that a missing index is told apart from 0.
		Index     *int      `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
	// Error is set by some compatible servers that answer 200 on failure.
	Error json.RawMessage `json:"error"`
}

// newOpenAIEmbed returns the batch call of the OpenAI embeddings wire,
// which vLLM, Ollama, llama.cpp, LM Studio and most gateways also speak.
func newOpenAIEmbed(cfg Config, h *transport.JSONClient) embedBatchFunc {
	endpoint := transport.Endpoint(openAIAPI.Base(cfg.BaseURL), "/embeddings", "")
	auth := openAIAPI.Header(cfg.APIKey, cfg.Headers)
	return func(ctx context.Context, texts []string) ([][]float32, error) {
		var resp oaEmbedResponse
		req := oaEmbedRequest{Model: cfg.Model, Input: texts, EncodingFormat: "float"}
		if err := h.Post(ctx, endpoint, auth, req, &resp); err != nil {
			return nil, err
		}
		return placeOAEmbeddings(&resp, len(texts))
	}
}

// placeOAEmbeddings puts each vector at its index: the API does not promise
// that data[] is in input order.
func placeOAEmbeddings(resp *oaEmbedResponse, n int) ([][]float32, error) {
	if len(resp.Data) == 0 && len(resp.Error) > 0 && string(resp.Error) != "null" {
		return nil, fmt.Errorf("server returned an error: %s", transport.Truncate(string(resp.Error), 300))
	}
	if len(resp.Data) != n {
		return nil, fmt.Errorf("server returned %d vectors for %d texts", len(resp.Data), n)
	}
	out := make([][]float32, n)
	for i, d := range resp.Data {
		switch {
		case d.Index == nil:
			return nil, fmt.Errorf("server returned data[%d] without an index", i)
		case *d.Index < 0 || *d.Index >= n:
			return nil, fmt.Errorf("server returned data[%d] with index %d, out of range for %d texts", i, *d.Index, n)
		case out[*d.Index] != nil:
			return nil, fmt.Errorf("server returned index %d twice", *d.Index)
		case len(d.Embedding) == 0:
			return nil, fmt.Errorf("server returned an empty vector at index %d", *d.Index)
		}
		out[*d.Index] = d.Embedding
	}
	return out, nil
}
